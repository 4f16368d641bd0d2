/**
 * The job's browser killed mid-job (its Chromium SIGKILLed, as a crashed browser): the job
 * opens a new session from the account's profile (`session-replaced`), resumes at its
 * checkpoint, never re-executes a completed step, and places one order.
 *
 * Two jobs at once on two shop accounts: one whose browser dies while it waits between steps
 * (for an approval), one whose browser dies while it is running.
 */
import { describe, expect, it } from 'vitest';
import {
  approve,
  CHECKOUT_STEPS,
  completedSteps,
  type EngineStack,
  executionsPerStep,
  isRunning,
  type JobView,
  ofType,
  reached,
  reExecutedAfterCompletion,
  runStepPoints,
  runToSuccess,
  sleep,
  submitCheckout,
  TENANT,
  useEngineStack,
  waitForJob,
  waitingAt,
} from '../support/stack.ts';

const engine = useEngineStack();

/** Kills the Chromium of the job's shop session; returns the session id and the browser's PID. */
async function killJobBrowser(e: EngineStack, jobId: string): Promise<{ sessionId: string; pid: number }> {
  const job = await e.ledger.getJob(TENANT, jobId);
  const sessionId = job.sessions.shop?.sessionId;
  if (!sessionId) throw new Error(`job ${jobId} has no shop session`);
  const pid = await e.stack.anchor.killBrowser(sessionId);
  for (let i = 0; i < 50 && isRunning(pid); i++) await sleep(100);
  expect(isRunning(pid)).toBe(false);
  return { sessionId, pid };
}

/** What must hold after a browser died at `killedAt`: a new session, the checkpoint kept, one order. */
async function expectRecovered(
  e: EngineStack,
  jobId: string,
  view: JobView,
  killed: { sessionId: string; killedAt: number; checkpoint: number },
): Promise<void> {
  const { job, entries } = view;
  expect(job.status).toBe('SUCCEEDED');

  // A new session replaced the dead one (same profile), and the job ran on in it.
  const replaced = ofType(entries, 'session-replaced');
  expect(replaced).toHaveLength(1);
  expect(replaced[0]?.detail?.previous).toBe(killed.sessionId);
  const newSession = replaced[0]?.sessionId;
  expect(newSession).toBeTruthy();
  expect(newSession).not.toBe(killed.sessionId);
  expect(job.sessions.shop?.sessionId).toBe(newSession);
  expect(replaced[0]?.detail?.profile).toBe(
    ofType(entries, 'session-opened')[0]?.detail?.profile as string | undefined,
  );
  expect(e.stack.anchor.session(killed.sessionId)?.status).toBe('failed');

  // It resumed at its checkpoint: nothing before it ran again after the kill.
  const after = runStepPoints(e, jobId, 'before-action').filter((p) => p.at > killed.killedAt);
  expect(after.length).toBeGreaterThan(0);
  expect(Math.min(...after.map((p) => p.info.stepIndex ?? -1))).toBeGreaterThanOrEqual(killed.checkpoint);
  expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
  expect(reExecutedAfterCompletion(e, jobId, entries)).toEqual([]);
  // Every completion after the replacement was made in the new session.
  const replacedAt = Date.parse(replaced[0]?.at ?? '');
  for (const c of ofType(entries, 'step-completed').filter((x) => Date.parse(x.at) > replacedAt)) {
    expect(c.sessionId).toBe(newSession);
  }

  // The shop's record: one order for the key, one order-placing request.
  const key = `${jobId}:place-order`;
  const writes = await e.shop.writes();
  expect(writes.countsByKey[key]).toBe(1);
  expect(writes.attemptsByKey[key]).toBe(1);
}

describe.concurrent('Engine: the browser killed mid-job', () => {
  it('opens a new session and resumes at the checkpoint when the browser dies between steps', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'browser-between';
    const SHIPPING_METHOD = CHECKOUT_STEPS.indexOf('shipping-method');
    await submitCheckout(e, { jobId, account: 'acct_demo_shop', approvals: ['shipping-method'] });
    await waitForJob(e, jobId, waitingAt('approval', 'shipping-method'), {
      timeoutMs: 200_000,
      what: 'the approval before shipping-method',
    });
    const killedAt = Date.now();
    const { sessionId } = await killJobBrowser(e, jobId);
    await approve(e, jobId, 'shipping-method');
    const view = await runToSuccess(e, jobId, { timeoutMs: 200_000 });

    await expectRecovered(e, jobId, view, { sessionId, killedAt, checkpoint: SHIPPING_METHOD });
    // Nothing was in flight when the browser died: every step's action ran exactly once.
    const runs = executionsPerStep(e, jobId);
    expect(CHECKOUT_STEPS.map((_, i) => runs.get(i) ?? 0)).toEqual(CHECKOUT_STEPS.map(() => 1));
    // The first action in the new session was the checkpointed step's.
    const first = runStepPoints(e, jobId, 'before-action').find((p) => p.at > killedAt);
    expect(first?.info.step).toBe('shipping-method');
  });

  it('opens a new session and resumes at the checkpoint when the browser dies while a step runs', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'browser-running';
    await submitCheckout(e, { jobId, account: 'acct_demo_shop_totp' });
    const { job } = await waitForJob(e, jobId, reached(5), {
      timeoutMs: 200_000,
      what: 'step 5',
      pollMs: 50,
    });
    const checkpoint = job.nextStep;
    const killedAt = Date.now();
    const { sessionId } = await killJobBrowser(e, jobId);
    const view = await runToSuccess(e, jobId, { timeoutMs: 240_000 });

    await expectRecovered(e, jobId, view, { sessionId, killedAt, checkpoint });
    // Steps before the checkpoint ran once; a step in flight when the browser died may have run twice.
    const runs = executionsPerStep(e, jobId);
    for (let i = 0; i < checkpoint; i++) expect(runs.get(i), CHECKOUT_STEPS[i]).toBe(1);
    for (let i = checkpoint; i < CHECKOUT_STEPS.length; i++) expect(runs.get(i)).toBeLessThanOrEqual(2);
  });
});
