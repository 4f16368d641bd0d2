import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { TENANT } from '../../support/fixtures.ts';
import { keyOf } from '../../support/records.ts';
import { call } from '../api/support/http.ts';
import { connect, type McpConnection, structured, type Transport, toolError } from './clients.ts';

/**
 * An agent hands off a checkout through MCP and picks it up again, on the real local stack
 * (the real ASL, the real handlers in their own processes, DynamoDB Local, real Chromium, the
 * demo shop), over both transports at once: the agent's submitter-only key submits, follows
 * with progress (over HTTP in calls of at most 20 s, as its client would), finds the job
 * waiting for a person, cannot approve it itself; a person approves through the API; the
 * agent's next wait sees it succeed, with the order's evidence and a screenshot it can read.
 * The shop's own record has one order per job. Another tenant's key sees nothing.
 */
const getEngine = useEngineStack();
const checkout = JSON.parse(
  readFileSync(new URL('../../../demo/jobs/checkout.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

interface Followed {
  outcome: string;
  job: Record<string, unknown>;
  /** The progress values each call reported (a call starts again from where the job is). */
  progress: number[][];
  calls: number;
  /** What the last call said of the transport's limit per call. */
  cappedAtSeconds: unknown;
}

/** wait_for_job until it returns for a reason other than its timeout, as an agent loops. */
async function follow(c: McpConnection, jobId: string, deadlineMs: number): Promise<Followed> {
  const progress: number[][] = [];
  const end = Date.now() + deadlineMs;
  for (let calls = 1; ; calls++) {
    const seen: number[] = [];
    progress.push(seen);
    const out = structured(
      await c.client.callTool(
        { name: 'wait_for_job', arguments: { jobId, timeoutSeconds: 120 } },
        undefined,
        {
          timeout: 180_000,
          resetTimeoutOnProgress: true,
          onprogress: (p) => seen.push(p.progress),
        },
      ),
    );
    if (out.outcome !== 'timed_out') {
      const job = out.job as Record<string, unknown>;
      return { outcome: String(out.outcome), job, progress, calls, cappedAtSeconds: out.cappedAtSeconds };
    }
    if (Date.now() > end) throw new Error(`${jobId} still ${JSON.stringify(out.job)} after ${deadlineMs} ms`);
  }
}

describe('MCP on the real local stack', () => {
  it('hands off a checkout, follows it with progress, leaves the approval to a person, and reads the result', async () => {
    const engine = getEngine();
    const { stack } = engine;
    const keys = createApiKeyStore({ doc: stack.doc, tableName: stack.tableName });
    const agentKey = (await keys.create(TENANT, ['submitter'], { label: 'agent' })).apiKey;
    const otherTenant = (await keys.create('mcp-other-tenant', ['submitter', 'approver'])).apiKey;
    const apiUrl = stack.apiUrl as string;
    const runs: [Transport, string, string][] = [
      ['http', 'mcp-checkout-http', 'acct_demo_shop'],
      ['stdio', 'mcp-checkout-stdio', 'acct_demo_shop_totp'],
    ];

    await Promise.all(
      runs.map(async ([transport, jobId, account]) => {
        const agent = await connect(transport, apiUrl, agentKey);
        try {
          const submitted = structured(
            await agent.client.callTool({
              name: 'submit_job',
              arguments: { ...checkout, jobId, accounts: { shop: account } },
            }),
          );
          expect(submitted).toMatchObject({ created: true, job: { jobId, stepCount: 14 } });

          const first = await follow(agent, jobId, 300_000);
          expect(first.outcome, transport).toBe('waiting_for_person');
          expect(first.job).toMatchObject({
            status: 'WAITING_APPROVAL',
            wait: { kind: 'approval', step: 'place-order' },
            stepsCompleted: 13,
          });
          // A notification per step completed, up to the approval: growing within each call (MCP
          // asks it), never going back from one call to the next.
          const all = first.progress.flat();
          expect(new Set(all).size, transport).toBeGreaterThanOrEqual(3);
          expect(all.at(-1)).toBe(13);
          for (const call of first.progress) {
            for (let i = 1; i < call.length; i++) expect(call[i]).toBeGreaterThan(call[i - 1] as number);
          }
          for (let i = 1; i < all.length; i++) expect(all[i]).toBeGreaterThanOrEqual(all[i - 1] as number);
          // Over HTTP one call waits at most 20 s (API Gateway's limit), whatever the agent asked for.
          expect(first.cappedAtSeconds).toBe(transport === 'http' ? 20 : undefined);

          // The agent's key may not approve; another tenant's key sees nothing of the job.
          const refused = toolError(
            await agent.client.callTool({
              name: 'answer_wait',
              arguments: { jobId, step: 'place-order', decision: 'approve' },
            }),
          );
          expect(refused).toMatchObject({ status: 403, code: 'forbidden' });
          const stranger = await connect(transport, apiUrl, otherTenant);
          try {
            const hidden = toolError(
              await stranger.client.callTool({ name: 'get_job', arguments: { jobId } }),
            );
            expect(hidden).toMatchObject({ status: 404, code: 'not_found' });
          } finally {
            await stranger.close();
          }

          // A person approves through the API, with their own key.
          const approved = await call(apiUrl, 'POST', `/jobs/${jobId}/decisions`, {
            key: stack.demoApiKey,
            body: { step: 'place-order', decision: 'approve', comment: 'checked the basket' },
          });
          expect(approved.status).toBe(200);

          const done = await follow(agent, jobId, 180_000);
          expect(done.outcome).toBe('finished');
          expect(done.job).toMatchObject({ status: 'SUCCEEDED', stepsCompleted: 14, wait: null });
          const evidence = done.job.evidence as Record<string, Record<string, unknown>>;
          expect(evidence['place-order']?.orderId).toEqual(expect.any(String));
          const shots = done.job.screenshots as { uri: string }[];
          expect(shots.length).toBeGreaterThan(0);
          const image = await agent.client.readResource({ uri: shots.at(-1)?.uri as string });
          const shot = image.contents[0] as { mimeType: string; blob: string };
          expect(shot.mimeType).toBe('image/jpeg');
          expect(Buffer.from(shot.blob, 'base64').subarray(0, 2).toString('hex')).toBe('ffd8');
        } finally {
          await agent.close();
        }
      }),
    );

    const writes = await engine.shop.writes();
    for (const [, jobId] of runs) {
      expect(writes.countsByKey[await keyOf(engine, jobId, 'place-order')], jobId).toBe(1);
    }
  }, 600_000);
});
