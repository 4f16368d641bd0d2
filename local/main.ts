/**
 * `npm start`: the whole local stack in the foreground. Prints what runs where and the demo
 * tenant's API key, reports job progress, and stops everything on Ctrl-C. Data stays under
 * `.local/` (`--fresh` empties it first); unfinished jobs resume from the ledger on start.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { LatencyProfile } from '../demo/sites/http/latency.ts';
import { siteLatencyArgument } from '../demo/sites/latency-option.ts';
import { type ApplicationConfig, configuredApplications } from '../lambdas/lib/engine/applications.ts';
import { PLAYBOOKS_DIRS_ENV } from '../lambdas/lib/playbooks/discovery/find.ts';
import { type ControlServer, startControlServer } from './control.ts';
import { createProgressTracker } from './progress.ts';
import { type LocalStack, type LocalStackOptions, startLocalStack } from './stack.ts';

const program = new Command()
  .name('npm start --')
  .description(
    'Run Belay on this machine: DynamoDB Local, the browser service, the demo sites, the engine and the API.',
  )
  .option('--data-dir <dir>', 'where data persists', '.local')
  .option('--fresh', 'start from nothing (empties the data directory)', false)
  .option('--port <port>', 'API port', (v) => Number(v), Number(process.env.BELAY_API_PORT ?? 3000))
  .option('--cold', 'a new process per Lambda invocation (default: warm workers)', false)
  .option(
    '--ports <list>',
    'fixed loopback ports as name=port pairs (0 = a free port): anchor (the browser service, default 8790), shop (8801), crm (8802), billing (8803), dynamodb (DynamoDB Local, free), sfn (the local Step Functions endpoint, free); e.g. anchor=8790,shop=8801',
    parsePorts,
  )
  .option(
    '--playbooks <dir>',
    `a folder of playbooks (<name>/index.ts, <name>.playbook.yaml|json) besides playbooks/; repeatable (also ${PLAYBOOKS_DIRS_ENV}, path-delimited)`,
    (dir: string, dirs: string[]) => [...dirs, dir],
    [] as string[],
  )
  .option(
    '--applications <json>',
    'target applications over the demo sites, e.g. \'{"expenses":{"baseUrl":"http://127.0.0.1:9100"}}\' (also BELAY_APPLICATIONS; this flag wins)',
  )
  .option(
    '--control-port <port>',
    'start the control channel (fault injection) on this loopback port',
    parsePort,
  )
  .option(
    '--template <file>',
    'hold every function to the IAM policies of this synthesized template (default: synthesize the app when cdk/ changed)',
  )
  .option(
    '--site-latency <profile>',
    'the demo sites answer as slowly as real applications: a log-normal delay per response with this median and 95th percentile, e.g. p50=300,p95=1200 (ms)',
    siteLatencyArgument,
  )
  .option(
    '--mcp-answer-tenants <tenants>',
    'tenants (comma-separated) whose agents may answer approvals, one-time codes and reviews through MCP (also BELAY_MCP_ANSWER_TENANTS; default: none, people answer them)',
  )
  .option(
    '--end-sessions',
    'end the browser sessions on exit (default: they live on for the next start)',
    false,
  )
  .parse();
const opts = program.opts<{
  dataDir: string;
  fresh: boolean;
  port: number;
  cold: boolean;
  endSessions: boolean;
  ports?: LocalStackOptions['ports'];
  controlPort?: number;
  template?: string;
  playbooks: string[];
  applications?: string;
  siteLatency?: LatencyProfile;
  mcpAnswerTenants?: string;
}>();
const mcpAnswerTenants = opts.mcpAnswerTenants ?? process.env.BELAY_MCP_ANSWER_TENANTS;

/** BELAY_APPLICATIONS, then --applications over it (both over the demo sites the stack starts). */
function applicationsOrExit(): Record<string, ApplicationConfig> {
  try {
    return configuredApplications(process.env.BELAY_APPLICATIONS, opts.applications);
  } catch (err) {
    console.error(`Belay could not start: ${(err as Error).message}`);
    process.exit(2);
  }
}
const applications = applicationsOrExit();

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port from 0 to 65535');
  return n;
}

/** `anchor=8790,shop=8801` -> `{ anchor: 8790, shop: 8801 }`. */
function parsePorts(value: string): LocalStackOptions['ports'] {
  const names = ['anchor', 'shop', 'crm', 'billing', 'dynamodb', 'sfn'] as const;
  const ports: NonNullable<LocalStackOptions['ports']> = {};
  for (const pair of value.split(',').filter(Boolean)) {
    const [name, port] = pair.split('=');
    const n = Number(port);
    if (!names.includes(name as (typeof names)[number]) || !Number.isInteger(n) || n < 0 || n > 65535)
      throw new InvalidArgumentError(`name=port pairs with names ${names.join(', ')}`);
    ports[name as (typeof names)[number]] = n;
  }
  return ports;
}

const track = createProgressTracker();
const started = Date.now();
const stamp = (): string => new Date().toISOString().slice(11, 19);

let stack: LocalStack | undefined;
try {
  stack = await startLocalStack({
    dataDir: opts.dataDir,
    fresh: opts.fresh,
    apiPort: opts.port,
    ...(opts.ports ? { ports: opts.ports } : {}),
    lambdaMode: opts.cold ? 'cold' : 'warm',
    ...(opts.template ? { template: opts.template } : {}),
    playbookDirs: opts.playbooks,
    applications,
    ...(opts.siteLatency ? { siteLatency: opts.siteLatency } : {}),
    ...(mcpAnswerTenants ? { env: { BELAY_MCP_ANSWER_TENANTS: mcpAnswerTenants } } : {}),
    log: (line) => console.log(`  ${line}`),
    onHistoryEvent: (event) => {
      const line = track(event);
      if (line) console.log(`${stamp()} ${line.jobId}: ${line.text}`);
    },
  });
} catch (err) {
  console.error(`Belay could not start: ${(err as Error).message}`);
  process.exit(1);
}

const s = stack;
let control: ControlServer | undefined;
if (opts.controlPort !== undefined) {
  try {
    control = await startControlServer({ stack: s, port: opts.controlPort });
  } catch (err) {
    console.error(`the control channel could not start: ${(err as Error).message}`);
    await s.stop();
    process.exit(1);
  }
}
console.log(`
Belay is running (started in ${((Date.now() - started) / 1000).toFixed(1)} s; data in ${s.dataDir})

  API               ${s.apiUrl}        (GET ${s.apiUrl}/openapi.json)
  console           ${s.apiUrl}/console   (sign in with the demo API key below)
  MCP               ${s.apiUrl}/mcp   (Streamable HTTP; or stdio: BELAY_URL=${s.apiUrl} BELAY_KEY=... npx belay mcp)
  demo tenant       ${s.demoTenant}
  demo API key      ${s.demoApiKey}
  browser service   ${s.anchor.baseUrl}  (Anchor-compatible; key ${s.anchor.apiKey})
  demo sites        shop ${s.sites.shop.baseUrl}  crm ${s.sites.crm.baseUrl}  billing ${s.sites.billing.baseUrl}
  applications      ${Object.entries(s.applications)
    .map(([name, a]) => `${name} ${a.baseUrl}`)
    .join('  ')}
  playbooks         ${s.playbooks.playbooks.map((p) => p.playbook.id).join(', ')}   (GET ${s.apiUrl}/playbooks)
  DynamoDB Local    ${s.dynamodb.endpoint}  (table ${s.tableName})
  Step Functions    ${s.sfnServer.endpoint}  (local runner, AWS JSON protocol)${control ? `\n  control channel   ${control.url}  (token in ${s.dataDir}/control-token)` : ''}

Try:
  export BELAY_KEY=${s.demoApiKey}
  curl -s -X POST ${s.apiUrl}/jobs -H "Authorization: Bearer $BELAY_KEY" -H 'content-type: application/json' -d @demo/jobs/checkout.json
  curl -s ${s.apiUrl}/jobs/demo-checkout-1 -H "Authorization: Bearer $BELAY_KEY"
  npx belay jobs submit demo/jobs/checkout.json --wait && npx belay approve demo-checkout-1 --wait
${s.resumed.length ? `\nResumed ${s.resumed.length} unfinished job(s): ${s.resumed.map((r) => r.jobId).join(', ')}\n` : ''}
Ctrl-C stops everything.`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(
    `\n${signal}: stopping${opts.endSessions ? ' and ending browser sessions' : ' (browser sessions live on for the next start)'}`,
  );
  await control?.stop();
  await s.stop({ endSessions: opts.endSessions });
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
