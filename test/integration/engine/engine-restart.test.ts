/**
 * The whole local stack killed mid-job, as a machine crashes: it runs in a child process that
 * is SIGKILLed while the job is RUNNING (no chance to stop anything; its workers die with it,
 * its browsers and DynamoDB Local are orphaned). A new stack on the same data directory and
 * ports resumes the job from the ledger in a new execution, reuses the live browser session,
 * and finishes with one order, re-running no completed step.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionName } from '../../../lambdas/lib/engine/executions.ts';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { WORKER_COMMAND_LINE } from '../../../local/lambda/worker-process.ts';
import { freePorts } from '../../../local/ports.ts';
import { apiDepsForChild, type ChildStack, startChildStack } from '../../support/child-stack.ts';
import {
  type EngineStack,
  type JobsClient,
  startEngineStack,
  stopEngineStack,
} from '../../support/engine-stack.ts';
import { CHECKOUT_STEPS, TENANT } from '../../support/fixtures.ts';
import { executionsOf, reached, runToSuccess, submitCheckout, waitForJob } from '../../support/jobs.ts';
import { isRunning, leftoverProcesses, processes, waitForExit } from '../../support/processes.ts';
import { completedSteps, executionsPerStep, keyOf, ofType, runStepPoints } from '../../support/records.ts';

const JOB = 'restart-mid-job';

let dataDir = '';
let ports: { anchor: number; shop: number; crm: number; billing: number } = {
  anchor: 0,
  shop: 0,
  crm: 0,
  billing: 0,
};
let child: ChildStack | undefined;
let restarted: EngineStack | undefined;

/** The main process of each Chromium under the data directory (one per live session). */
function mainBrowsers(): number[] {
  return processes()
    .filter(
      (p) => p.cmdline.includes(dataDir) && /chromium/.test(p.cmdline) && !p.cmdline.includes('--type='),
    )
    .map((p) => p.pid);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'belay-restart-'));
  const [anchor = 0, shop = 0, crm = 0, billing = 0] = await freePorts(4);
  ports = { anchor, shop, crm, billing };
  child = await startChildStack(dataDir, { ...ports, dynamodb: 0, sfn: 0 });
}, 180_000);

afterAll(async () => {
  await child?.kill();
  if (restarted) {
    await stopEngineStack(restarted);
    return;
  }
  // The restart never happened: end what the crashed stack left behind, and say so.
  if (!dataDir) return;
  const left = await leftoverProcesses(new Set(), dataDir, 0);
  for (const p of left) process.kill(p.pid, 'SIGKILL');
  if (left.length > 0) throw new Error(`killed ${left.length} process(es) left by the crashed stack`);
}, 120_000);

describe('Engine: the stack killed and restarted mid-job', () => {
  it('resumes the job at its checkpoint in a new execution, in the same live session, with one order', {
    timeout: 300_000,
  }, async () => {
    const running = child;
    if (!running) throw new Error('the child stack did not start');
    // 1. The job runs in the child stack, submitted through the API against it.
    const api = await apiDepsForChild(running);
    const before: JobsClient = { api, ledger: api.engine.ledger };
    await submitCheckout(before, { jobId: JOB, account: 'acct_demo_shop' });
    await waitForJob(before, JOB, reached(7), { timeoutMs: 200_000, what: 'step 7', pollMs: 100 });

    // 2. Crash: SIGKILL the stack's process while the job is RUNNING.
    const workers = processes()
      .filter((p) => p.ppid === running.child.pid && WORKER_COMMAND_LINE.test(p.cmdline))
      .map((p) => p.pid);
    expect(workers.length).toBeGreaterThan(0);
    const browsersBefore = mainBrowsers();
    expect(browsersBefore).toHaveLength(1);
    await running.kill();
    // The step workers die with their runner (a write in flight may still land first); the browser lives on.
    expect(await waitForExit(workers)).toEqual([]);
    expect(browsersBefore.every(isRunning)).toBe(true);
    const atCrash = await before.ledger.readJob(TENANT, JOB); // DynamoDB Local outlived its parent
    expect(atCrash.job.status).toBe('RUNNING');
    const checkpoint = atCrash.job.nextStep;
    const sessionBefore = atCrash.job.sessions.shop?.sessionId;
    expect(sessionBefore).toBeTruthy();
    api.sfn.destroy();
    api.doc.destroy();

    // 3. Restart on the same data directory and ports: unfinished jobs resume from the ledger.
    const restartedAt = Date.now();
    restarted = await startEngineStack({ dataDir, ports: { ...ports, dynamodb: 0, sfn: 0 } });
    const e = restarted;
    const generation1 = executionName(await e.ledger.getJob(TENANT, JOB), 1);
    expect(e.stack.resumed).toEqual([{ tenantId: TENANT, jobId: JOB, executionName: generation1 }]);
    const view = await runToSuccess(e, JOB, { timeoutMs: 240_000 });
    const { job, entries } = view;

    expect(job.status).toBe('SUCCEEDED');
    // A new execution (generation 1) coordinated the rest of the job.
    expect(executionsOf(e, JOB).map((x) => [x.name, x.status])).toEqual([[generation1, 'SUCCEEDED']]);
    expect(job.executionName).toBe(generation1);

    // It reused the live session: same session id, the same Chromium adopted, no replacement.
    expect(job.sessions.shop?.sessionId).toBe(sessionBefore);
    expect(ofType(entries, 'session-replaced')).toEqual([]);
    expect(ofType(entries, 'session-opened')).toHaveLength(1);
    const adopted = e.stack.anchor.session(sessionBefore ?? '')?.browser.pid;
    expect(browsersBefore).toContain(adopted);
    for (const c of ofType(entries, 'step-completed')) expect(c.sessionId).toBe(sessionBefore);

    // It resumed at its checkpoint: after the restart nothing before it ran, and every step
    // was completed exactly once over both lives of the stack.
    const after = runStepPoints(e, JOB, 'before-action');
    expect(after.length).toBeGreaterThan(0);
    expect(Math.min(...after.map((p) => p.info.stepIndex ?? -1))).toBeGreaterThanOrEqual(checkpoint);
    // Every step from the checkpoint on was completed by the restarted stack.
    const laterCompletions = ofType(entries, 'step-completed').filter(
      (c) => (c.stepIndex ?? -1) >= checkpoint,
    );
    expect(laterCompletions).toHaveLength(CHECKOUT_STEPS.length - checkpoint);
    for (const c of laterCompletions) expect(Date.parse(c.at), c.step).toBeGreaterThanOrEqual(restartedAt);
    const runs = executionsPerStep(e, JOB);
    for (let i = 0; i < checkpoint; i++) expect(runs.get(i), CHECKOUT_STEPS[i]).toBeUndefined();
    expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
    const completedBeforeCrash = completedSteps(atCrash.entries);
    expect(completedBeforeCrash).toEqual(CHECKOUT_STEPS.slice(0, checkpoint));
    // The same entries, untouched but for the TTL each entry takes from its job when the job ends.
    const withoutTtl = (x: LedgerEntry): Record<string, unknown> => {
      const { expiresAt: _ttl, ...rest } = x as LedgerEntry & { expiresAt?: number };
      return rest;
    };
    expect(ofType(entries, 'step-completed').slice(0, checkpoint).map(withoutTtl)).toEqual(
      ofType(atCrash.entries, 'step-completed').map(withoutTtl),
    );
    // Every entry expires with the finished job, the ends of its sessions (written after it finished) too.
    expect(entries.filter((x) => (x as { expiresAt?: number }).expiresAt === undefined)).toEqual([]);

    // The shop's record (kept across the restart): one order, one order-placing request.
    const key = await keyOf(e, JOB, 'place-order');
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
  });
});
