/**
 * The job's browser killed mid-job (its Chromium SIGKILLed, as a crashed browser): the job
 * opens a new session from the account's profile (`session-replaced`), resumes at its
 * checkpoint, never re-executes a completed step, and places one order.
 *
 * Two jobs at once on two shop accounts: one whose browser dies while it waits between steps
 * (for an approval), one whose browser dies while it is running.
 */
import { describe, expect, it } from 'vitest';
import { type EngineStack, useEngineStack } from '../../support/engine-stack.ts';
import { killBrowserAsStepStarts, killBrowserAt } from '../../support/faults.ts';
import { CHECKOUT_STEPS, sleep, TENANT } from '../../support/fixtures.ts';
import {
  approve,
  type JobView,
  runToSuccess,
  submitCheckout,
  waitForJob,
  waitingAt,
} from '../../support/jobs.ts';
import { isRunning } from '../../support/processes.ts';
import {
  completedSteps,
  executionsPerStep,
  keyOf,
  ofType,
  reExecutedAfterCompletion,
  runStepPoints,
} from '../../support/records.ts';

const engine = useEngineStack();

/** Kills the Chromium of the job's shop session (and checks it is gone); returns the session id. */
async function killJobBrowser(e: EngineStack, jobId: string): Promise<{ sessionId: string }> {
  const job = await e.ledger.getJob(TENANT, jobId);
  const sessionId = job.sessions.shop?.sessionId;
  if (!sessionId) throw new Error(`job ${jobId} has no shop session`);
  const pid = await e.stack.anchor.killBrowser(sessionId);
  for (let i = 0; i < 50 && isRunning(pid); i++) await sleep(100);
  expect(isRunning(pid)).toBe(false);
  return { sessionId };
}

interface Kill {
  sessionId: string;
  at: number;
  /** The job's checkpoint (next step) when its browser died. */
  checkpoint: number;
}

/** What must hold after the browser died (once per kill): a new session each time, the checkpoint kept, one order. */
async function expectRecovered(e: EngineStack, jobId: string, view: JobView, kills: Kill[]): Promise<void> {
  const { job, entries } = view;
  expect(job.status).toBe('SUCCEEDED');

  // A new session replaced each dead one (same profile), and the job ran on in it.
  const replaced = ofType(entries, 'session-replaced');
  expect(replaced.map((r) => r.detail?.previous)).toEqual(kills.map((k) => k.sessionId));
  const profile = ofType(entries, 'session-opened')[0]?.detail?.profile;
  expect(profile).toBeTruthy();
  replaced.forEach((r, i) => {
    expect(r.detail?.profile).toBe(profile);
    expect(r.sessionId).toBeTruthy();
    expect(r.sessionId).not.toBe(r.detail?.previous);
    // A later kill hit the session this replacement opened.
    if (i + 1 < kills.length) expect(kills[i + 1]?.sessionId).toBe(r.sessionId);
  });
  for (const k of kills) expect(e.stack.anchor.session(k.sessionId)?.status).toBe('failed');
  const newest = replaced.at(-1);
  expect(job.sessions.shop?.sessionId).toBe(newest?.sessionId);
  for (const c of ofType(entries, 'step-completed').filter((x) => x.at > (newest?.at ?? ''))) {
    expect(c.sessionId).toBe(newest?.sessionId);
  }

  // After each kill the job resumed at its checkpoint: nothing before it ran again.
  for (const k of kills) {
    const after = runStepPoints(e, jobId, 'before-action').filter((p) => p.at > k.at);
    expect(after.length).toBeGreaterThan(0);
    expect(Math.min(...after.map((p) => p.info.stepIndex ?? -1))).toBeGreaterThanOrEqual(k.checkpoint);
  }
  expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
  expect(reExecutedAfterCompletion(e, jobId, entries)).toEqual([]);

  // The shop's record: one order for the key, one order-placing request.
  const key = await keyOf(e, jobId, 'place-order');
  const writes = await e.shop.writes();
  expect(writes.countsByKey[key]).toBe(1);
  expect(writes.attemptsByKey[key]).toBe(1);
}

const SHIPPING_METHOD = CHECKOUT_STEPS.indexOf('shipping-method');
const PAYMENT_DETAILS = CHECKOUT_STEPS.indexOf('payment-details');
const SET_QUANTITY = CHECKOUT_STEPS.indexOf('set-quantity');

describe.concurrent('Engine: the browser killed mid-job', () => {
  it('opens a new session and resumes at the checkpoint when the browser dies between steps and mid-action', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'browser-waiting';
    await submitCheckout(e, { jobId, account: 'acct_demo_shop', approvals: ['shipping-method'] });
    // 1. The browser dies while the job waits (for an approval) between steps.
    await waitForJob(e, jobId, waitingAt('approval', 'shipping-method'), {
      timeoutMs: 200_000,
      what: 'the approval before shipping-method',
    });
    const first: Kill = { ...(await killJobBrowser(e, jobId)), at: Date.now(), checkpoint: SHIPPING_METHOD };
    // 2. Later it dies in the middle of a step's action (payment-details, before its click).
    const secondKill = killBrowserAt(e, jobId, PAYMENT_DETAILS, 'mid-action');
    await approve(e, jobId, 'shipping-method');
    const second: Kill = { ...(await secondKill), checkpoint: PAYMENT_DETAILS };
    const view = await runToSuccess(e, jobId, { timeoutMs: 240_000 });

    await expectRecovered(e, jobId, view, [first, second]);
    // The first action after the first kill was the checkpointed step's.
    expect(runStepPoints(e, jobId, 'before-action').find((p) => p.at > first.at)?.info.step).toBe(
      'shipping-method',
    );
    // Only the step whose action the browser died in ran twice.
    const runs = executionsPerStep(e, jobId);
    expect(CHECKOUT_STEPS.map((_, i) => runs.get(i) ?? 0)).toEqual(
      CHECKOUT_STEPS.map((_, i) => (i === PAYMENT_DETAILS ? 2 : 1)),
    );
  });

  it('reports the lost session (not a changed layout) when the browser dies as a step starts', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'browser-running';
    // The browser dies just as set-quantity's worker reattaches and checks its page.
    const killed = killBrowserAsStepStarts(e, jobId, SET_QUANTITY, 15);
    await submitCheckout(e, { jobId, account: 'acct_demo_shop_totp' });
    const kill: Kill = { ...(await killed), checkpoint: SET_QUANTITY };
    const view = await runToSuccess(e, jobId, { timeoutMs: 240_000 });

    // A dead browser is a lost session, never a page to be reviewed.
    expect(ofType(view.entries, 'review-requested')).toEqual([]);
    await expectRecovered(e, jobId, view, [kill]);
    // Nothing before the step that was starting ran twice.
    const runs = executionsPerStep(e, jobId);
    for (let i = 0; i < SET_QUANTITY; i++) expect(runs.get(i), CHECKOUT_STEPS[i]).toBe(1);
    for (let i = SET_QUANTITY; i < CHECKOUT_STEPS.length; i++) expect(runs.get(i)).toBeLessThanOrEqual(2);
  });
});
