import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../../lambdas/lib/notifications/signing.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { TENANT } from '../../support/fixtures.ts';
import { call } from '../api/support/http.ts';

/**
 * `belay` as a person types it (`node tools/cli/bin/belay.js`, what `npx belay` runs) against
 * the real local stack: the demo job submitted with `--wait` stops at its approval (exit 10),
 * `belay approve --wait` finishes it (exit 0); login keeps the key in a 0600 file; errors say
 * what to fix with exit codes scripts can use. The same job's wait reaches two tenant webhooks,
 * signed, with the console link; the one that fails at first is retried and both are logged.
 */
const getEngine = useEngineStack({
  env: { BELAY_WEBHOOK_BACKOFF_MS: '200,200,200', BELAY_WEBHOOK_TIMEOUT_MS: '2000' },
});

interface Run {
  code: number;
  out: string;
  err: string;
}

let configHome: string;
beforeAll(async () => {
  configHome = await mkdtemp(join(tmpdir(), 'belay-cli-'));
});
afterAll(async () => {
  await rm(configHome, { recursive: true, force: true });
});

function belay(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['tools/cli/bin/belay.js', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: configHome, XDG_CONFIG_HOME: configHome, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
    child.stdin.end(input ?? '');
  });
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback that answers `statuses` in turn (then 200). */
async function receiver(
  statuses: number[],
): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('belay, the command line', () => {
  it('submits the demo job, waits, approves it to SUCCEEDED; webhooks are told, signed and logged', async () => {
    const { stack } = getEngine();
    const url = stack.apiUrl as string;
    const key = stack.demoApiKey;

    // Not configured: the error says what to set (exit 3); an unreachable URL exit 7; a wrong key exit 3.
    const none = await belay(['jobs', 'list'], { BELAY_LOCAL_STATE: join(configHome, 'none.json') });
    expect(none.code).toBe(3);
    expect(none.err).toContain('BELAY_URL');
    expect((await belay(['jobs', 'list', '--url', 'http://127.0.0.1:9', '--key', key])).code).toBe(7);
    const badKey = await belay(['jobs', 'list'], { BELAY_URL: url, BELAY_KEY: 'blk_000000000000_nope' });
    expect(badKey.code).toBe(3);
    expect(badKey.err).toContain('belay login');

    // login checks the key and keeps it for this user only.
    const login = await belay(['--url', url, '--key', '-', 'login'], {}, `${key}\n`);
    expect(login.code, login.err).toBe(0);
    const file = join(configHome, 'belay', 'credentials.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url, key });

    // Two webhooks: one answers 500 twice before 200 (retried with backoff), one 200 at once.
    const flaky = await receiver([500, 500]);
    const steady = await receiver([]);
    try {
      const hooks: { id: string; secret: string }[] = [];
      for (const r of [flaky, steady]) {
        const added = await belay(['--json', 'webhooks', 'add', r.url, '--description', 'test']);
        expect(added.code, added.err).toBe(0);
        const json = JSON.parse(added.out) as { webhook: { webhookId: string }; secret: string };
        hooks.push({ id: json.webhook.webhookId, secret: json.secret });
      }
      expect(
        (await call(url, 'POST', '/notifications/webhooks', { key, body: { url: 'http://10.0.0.1/x' } }))
          .status,
      ).toBe(422);

      // Submit with --wait: it follows the job and stops when the job waits for a person (exit 10).
      const submitted = await belay(['jobs', 'submit', 'demo/jobs/checkout.json', '--wait']);
      expect(submitted.code, submitted.err).toBe(10);
      expect(submitted.err).toContain('belay approve demo-checkout-1');
      expect(submitted.out).toContain('WAITING_APPROVAL');
      expect(submitted.err).toMatch(/step 13\/14 \| WAITING_APPROVAL \| waits for approval at place-order/);

      // The webhooks: signed over the raw body with each one's secret, with the console link of the decision.
      const deadline = Date.now() + 30_000;
      while ((flaky.got.length < 3 || steady.got.length < 1) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(flaky.got).toHaveLength(3);
      expect(steady.got).toHaveLength(1);
      const [flakyHook, steadyHook] = hooks as [
        { id: string; secret: string },
        { id: string; secret: string },
      ];
      const delivered = steady.got[0] as Received;
      expect(
        verifySignature(
          steadyHook.secret,
          delivered.headers['belay-signature'] as string,
          delivered.body,
          Date.now() / 1000,
        ),
      ).toBe(true);
      expect(
        verifySignature(
          flakyHook.secret,
          delivered.headers['belay-signature'] as string,
          delivered.body,
          Date.now() / 1000,
        ),
      ).toBe(false);
      expect(
        verifySignature(
          steadyHook.secret,
          delivered.headers['belay-signature'] as string,
          `${delivered.body} `,
          Date.now() / 1000,
        ),
      ).toBe(false);
      const payload = JSON.parse(delivered.body) as {
        type: string;
        text: string;
        job: { jobId: string; kind: string; step: string };
        links: { console: string };
      };
      expect(payload).toMatchObject({
        type: 'job.waiting',
        job: { jobId: 'demo-checkout-1', kind: 'approval', step: 'place-order' },
      });
      expect(payload.links.console).toBe(`${url}/console/jobs/demo-checkout-1`);
      expect(payload.text).toContain(payload.links.console);
      // The delivery log: the flaky one delivered on its third attempt.
      await new Promise((r) => setTimeout(r, 500));
      const log = await belay(['--json', 'webhooks', 'deliveries', flakyHook.id]);
      const deliveries = (
        JSON.parse(log.out) as { deliveries: { outcome: string; attempts: { status: number }[] }[] }
      ).deliveries;
      expect(deliveries[0]).toMatchObject({
        outcome: 'delivered',
        attempts: [{ status: 500 }, { status: 500 }, { status: 200 }],
      });
    } finally {
      await flaky.close();
      await steady.close();
    }

    // The job as the CLI shows it, and as JSON.
    const got = await belay(['--json', 'jobs', 'get', 'demo-checkout-1']);
    expect(JSON.parse(got.out).job).toMatchObject({
      status: 'WAITING_APPROVAL',
      wait: { kind: 'approval', step: 'place-order' },
    });
    expect((await belay(['jobs', 'get', 'no-such-job'])).code).toBe(4);
    expect((await belay(['mfa', 'demo-checkout-1', '12'])).code).toBe(5);

    // Approve from the terminal and follow it to the end: exit 0, SUCCEEDED, the decision in the ledger.
    const approved = await belay(['approve', 'demo-checkout-1', '--comment', 'from the terminal', '--wait']);
    expect(approved.code, approved.err).toBe(0);
    expect(approved.out).toContain('SUCCEEDED');
    const ledger = await belay(['--json', 'jobs', 'ledger', 'demo-checkout-1']);
    const entries = (
      JSON.parse(ledger.out) as { entries: { type: string; detail?: Record<string, unknown> }[] }
    ).entries;
    expect(entries.find((e) => e.type === 'approval-recorded')?.detail).toMatchObject({
      decision: 'approve',
      comment: 'from the terminal',
    });
    const watched = await belay(['jobs', 'watch', 'demo-checkout-1']);
    expect(watched.code).toBe(0);
    expect((await stack.ledger.getJob(TENANT, 'demo-checkout-1')).status).toBe('SUCCEEDED');

    // keys create through the API (admin), and the new key works; playbooks list comes from GET /playbooks.
    const created = await belay(['--json', 'keys', 'create', '--roles', 'approver', '--label', 'cli']);
    expect(created.code, created.err).toBe(0);
    const newKey = (JSON.parse(created.out) as { apiKey: string }).apiKey;
    expect((await belay(['jobs', 'list'], { BELAY_KEY: newKey })).code).toBe(0);
    const playbooks = await belay(['playbooks', 'list']);
    expect(playbooks.code, playbooks.err).toBe(0);
    expect(playbooks.out).toMatch(/checkout@1\s+14 steps/);
    expect(playbooks.out).toMatch(/crm-billing-sync@1\s+\d+ steps/);
    expect((await belay(['logout'])).code).toBe(0);
  }, 600_000);
  it('checks a playbook for drift from the command line, and shows its health', async () => {
    const { stack } = getEngine();
    const env = { BELAY_URL: stack.apiUrl as string, BELAY_KEY: stack.demoApiKey };
    const checked = await belay(['playbook', 'check', 'checkout@1', '--account', 'shop=acct_demo_shop'], env);
    expect(checked.code, checked.err).toBe(0);
    expect(checked.out).toMatch(/place-order\s+ok\s+[\d.]+ s/);
    expect(checked.out).toContain(
      'checkout@1: every step is as the playbook expects (14 steps, nothing committed)',
    );
    const health = await belay(['playbook', 'health', 'checkout@1'], env);
    expect(health.code, health.err).toBe(0);
    expect(health.out).toMatch(/^checkout@1: ok$/m);
    // A bad account is refused with the API's message, before anything runs.
    const bad = await belay(['playbook', 'check', 'checkout@1', '--account', 'shop=nope'], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('expected <app>=<accountId>');
  });
});
