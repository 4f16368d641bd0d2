/**
 * The benchmark's baselines on the real demo sites and real Chromium, each killed once in
 * step 12: the naive agent (crm-records-agent@1 with the local policy, no ledger, no cache)
 * restarts from step one and its supervisor counts every model call, the killed process's
 * included; the Temporal recipe (checkout@1) resumes at step 12 from its checkpoint in a new
 * browser. Bounded: the policy's latency is 0 and each runner runs once clean or once crashed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import { type StartedSites, startSites } from '../../../demo/sites/index.ts';
import { isProcessAlive } from '../../../local/chromium.ts';
import { AGENT_CRASH_ACTION, AGENT_CRASH_STEP, agentInputs } from '../../../tools/bench/agent.ts';
import { naivePids, runNaive, supervise } from '../../../tools/bench/naive-runner.ts';

const NAIVE_AGENT = new URL('../../../tools/bench/naive-agent.ts', import.meta.url).pathname;

let sites: StartedSites;

beforeAll(async () => {
  sites = await startSites();
});

afterAll(async () => {
  await sites?.stop();
});

const agentArgs = (jobId: string, variant: number): string[] => [
  '--crm',
  sites.crm.baseUrl,
  '--job-id',
  jobId,
  '--latency-ms',
  '0',
  '--inputs',
  JSON.stringify(agentInputs(variant)),
];

describe('the naive agent', () => {
  it('asks the policy for every action, and again from step one after a crash in step 12', async () => {
    const clean = await supervise({ script: NAIVE_AGENT, args: agentArgs('naive-agent-clean', 1) });
    // Five contact steps (fill, fill, save, done) and eight one-field steps (fill, save, done).
    expect(clean).toMatchObject({
      processes: 1,
      stepsExecuted: 14,
      crashed: false,
      modelCalls: 44,
      usage: 0,
    });

    const crashed = await supervise({
      script: NAIVE_AGENT,
      args: agentArgs('naive-agent-crash', 2),
      crash: {
        args: ['--crash-at-step', String(AGENT_CRASH_STEP), '--crash-at-action', String(AGENT_CRASH_ACTION)],
        step: AGENT_CRASH_STEP,
      },
    });
    expect(crashed.crashed).toBe(true);
    expect(crashed.processes).toBe(2);
    // Steps 1 to 11 in the killed process, then all 14 again.
    expect(crashed.stepsExecuted).toBe(25);
    // Killed process: steps 2-11 (4 contact steps x 4 + 6 x 3 = 34) and step 12's fill = 35.
    // Restart: steps 2-11 already show their values (save, done: 2 each = 20), then 3 + 4 + 3 = 10.
    expect(crashed.modelCalls).toBe(65);
    expect(crashed.killToVerifiedMs).toBeGreaterThan(0);
    expect(crashed.killToVerifiedMs).toBeLessThan(crashed.wallMs);
    expect([...naivePids].filter(isProcessAlive)).toEqual([]);
  }, 300_000);
});

describe('the Temporal recipe', () => {
  it('resumes at step 12 in a new browser, signs in again, and places one order', async () => {
    const jobId = 'recipe-crash';
    const admin = siteAdmin(sites.shop.baseUrl, sites.adminToken);
    await admin.clearRequests();
    const run = await runNaive({
      shopBaseUrl: sites.shop.baseUrl,
      username: 'shopper05@example.com',
      jobId,
      crashAtStep: 12,
      resume: true,
    });
    expect(run.crashed).toBe(true);
    expect(run.processes).toBe(2);
    // Steps 1 to 11, then 12 to 14 from the checkpoint: none twice.
    expect(run.stepsExecuted).toBe(14);
    expect(run.killToVerifiedMs).toBeGreaterThan(0);
    const writes = await admin.writes();
    expect(writes.countsByKey[`${jobId}:place-order`]).toBe(1);
    // The new browser had no session: the retry signed in again (step 2's sign-in, then the retry's).
    expect((await admin.requests()).postsByPath['/signin']).toBe(2);
    expect([...naivePids].filter(isProcessAlive)).toEqual([]);
  }, 300_000);
});
