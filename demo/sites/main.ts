/**
 * `npm run local:sites`: starts the demo shop, CRM and billing sites on loopback and prints
 * one line per site (name and base URL), the admin token and the demo accounts.
 *
 * Options: `--data-dir <dir>` (default `.local/sites`; `--memory` keeps state in memory),
 * `--shop-port`, `--crm-port`, `--billing-port` (defaults 8801, 8802, 8803; 0 = any free port),
 * `--site-latency p50=300,p95=1200` (answer as slowly as real applications, in ms).
 * The admin token is `BELAY_SITES_ADMIN_TOKEN` when set, else random.
 */
import { Command, InvalidArgumentError } from 'commander';
import { DEMO_ACCOUNTS, DEMO_SITE_NAMES } from '../accounts.ts';
import type { LatencyProfile } from './http/latency.ts';
import { startSites } from './index.ts';
import { siteLatencyArgument } from './latency-option.ts';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number');
  return n;
}

const program = new Command()
  .name('local:sites')
  .description('Start the demo target applications (shop, crm, billing) on 127.0.0.1')
  .option('--data-dir <dir>', 'directory for the sites’ persisted state', '.local/sites')
  .option('--memory', 'keep state in memory only')
  .option('--shop-port <port>', 'shop port', port, 8801)
  .option('--crm-port <port>', 'crm port', port, 8802)
  .option('--billing-port <port>', 'billing port', port, 8803)
  .option(
    '--site-latency <profile>',
    'a log-normal delay per response, e.g. p50=300,p95=1200 (ms)',
    siteLatencyArgument,
  )
  .parse();

const opts = program.opts<{
  dataDir: string;
  memory?: boolean;
  shopPort: number;
  crmPort: number;
  billingPort: number;
  siteLatency?: LatencyProfile;
}>();

const sites = await startSites({
  ...(opts.memory ? {} : { dataDir: opts.dataDir }),
  ports: { shop: opts.shopPort, crm: opts.crmPort, billing: opts.billingPort },
  ...(opts.siteLatency ? { latency: opts.siteLatency } : {}),
  ...(process.env.BELAY_SITES_ADMIN_TOKEN ? { adminToken: process.env.BELAY_SITES_ADMIN_TOKEN } : {}),
});

for (const name of DEMO_SITE_NAMES) console.log(`${name.padEnd(8)} ${sites[name].baseUrl}`);
console.log(
  `admin    x-admin-token: ${sites.adminToken}  (e.g. curl -H 'x-admin-token: ${sites.adminToken}' ${sites.shop.baseUrl}/__admin/outbox)`,
);
console.log(`state    ${opts.memory ? 'in memory' : opts.dataDir}`);
console.log('demo accounts (demo-only credentials of these local sites):');
for (const name of DEMO_SITE_NAMES) {
  for (const a of DEMO_ACCOUNTS[name]) {
    const mfa =
      a.mfa.kind === 'totp'
        ? `TOTP secret ${a.mfa.secret}`
        : a.mfa.kind === 'outbox'
          ? 'code by "SMS": read /__admin/outbox'
          : 'no MFA';
    console.log(`  ${name.padEnd(8)} ${a.username.padEnd(20)} ${a.password.padEnd(20)} ${mfa}`);
  }
}
console.log(
  'shop test cards: 4242 4242 4242 4242 (ok), 4000 0000 0000 0002 (declined); promo codes SAVE10, FREESHIP, WELCOME5',
);

const shutdown = (): void => {
  sites.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
