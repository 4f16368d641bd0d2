/**
 * Writes that do not end in one clean confirmation, on the real stack:
 *
 * - a write the application visibly refuses is a failed attempt: it spends the retry budget
 *   with the page's words recorded and ends FAILED once the budget is spent, instead of
 *   looping through Reconcile (which used to fill the execution's history);
 * - a job cancelled while its write is in flight settles the write first (its checkpoint is
 *   written) and then cancels, instead of ending the session mid-write with no record;
 * - a final check that cannot conclude (the site answers 503 for a while after the last write
 *   was verified) is tried again after a backoff and, if it stays inconclusive, goes to a
 *   person: a job whose writes were verified is never FAILED by its final check.
 */
import { describe, expect, it } from 'vitest';
import { cancelJob } from '../../../lambdas/lib/api/jobs/cancel.ts';
import type { FaultPointEvent } from '../../../local/lambda/events.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_STEPS, PERSON, RUN_STEP } from '../../support/fixtures.ts';
import { approve, diagnose, submitCheckout, submitSync, waitForJob, waitingAt } from '../../support/jobs.ts';
import { keyOf, ofType } from '../../support/records.ts';

const engine = useEngineStack();
const PLACE_ORDER = CHECKOUT_STEPS.indexOf('place-order');

/** Makes the shop unavailable the instant place-order's checkpoint is being written (before Finish looks). */
function shopDownAfterPlaceOrder(jobId: string): () => void {
  const e = engine();
  const events = e.stack.lambdas.events;
  const listener = (p: FaultPointEvent): void => {
    if (p.functionName !== RUN_STEP || p.info.jobId !== jobId) return;
    if (p.point !== 'during-checkpoint' || p.info.stepIndex !== PLACE_ORDER) return;
    // Synchronous, in this process: the worker goes on only after the listeners ran.
    e.stack.sites.setFaults('shop', { unavailable: true });
  };
  events.on('fault-point', listener);
  return () => events.off('fault-point', listener);
}

describe.sequential('Engine: refused writes and final checks that cannot conclude', () => {
  it("ends a write the shop keeps refusing FAILED after its retry budget, with the page's words, placing nothing", {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'refused-write';
    try {
      await submitCheckout(e, { jobId, account: 'acct_demo_shop', retryBudget: 2 });
      await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 240_000 });
      await e.shop.setFaults({ refuseWrites: true });
      await approve(e, jobId, 'place-order');
      const { job, entries } = await waitForJob(e, jobId, ({ job: j }) => j.status === 'FAILED', {
        timeoutMs: 120_000,
        what: 'FAILED',
      });
      expect(job.failure?.reason, await diagnose(e, jobId)).toBe('retry-budget-exhausted');
      expect(job.failure?.message).toContain('not accepting changes');
      const failed = ofType(entries, 'step-failed').filter((f) => f.step === 'place-order');
      expect(failed).toHaveLength(2);
      for (const f of failed)
        expect(String(f.detail?.reason)).toMatch(/^the application refused the write: .*declined/);
      const writes = await e.shop.writes();
      const key = await keyOf(e, jobId, 'place-order');
      expect(writes.countsByKey[key]).toBeUndefined();
      // One request per attempt: the first and the two retries the budget allows.
      expect(writes.attemptsByKey[key]).toBe(3);
    } finally {
      await e.shop.setFaults({ refuseWrites: false });
    }
  });

  it('cancelled mid-write, settles the write first, then cancels: the CRM saved once, billing untouched', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'cancel-mid-write';
    try {
      await e.crm.setFaults({ slowMs: 2_500 });
      await submitSync(e, jobId);
      await waitForJob(
        e,
        jobId,
        ({ entries }) => entries.some((x) => x.type === 'step-started' && x.step === 'update-crm-customer'),
        {
          timeoutMs: 120_000,
          what: 'the CRM update in flight',
        },
      );
      const answer = await cancelJob(e.api, PERSON, jobId);
      expect(answer).toMatchObject({ cancelled: false, settling: true });
      expect(answer.job.status).toBe('RUNNING');
      const { entries } = await waitForJob(e, jobId, ({ job: j }) => j.status === 'CANCELLED', {
        timeoutMs: 120_000,
        what: 'CANCELLED',
      });
      const settled = entries.find(
        (x) => x.step === 'update-crm-customer' && (x.type === 'step-completed' || x.type === 'reconciled'),
      );
      expect(settled, await diagnose(e, jobId)).toBeDefined();
      expect(ofType(entries, 'cancel-requested')).toHaveLength(1);
      expect(ofType(entries, 'cancelled')[0]?.actor).toBe(PERSON.keyId);
      expect(entries.filter((x) => x.type === 'step-started' && x.step === 'update-billing-address')).toEqual(
        [],
      );
      expect((await e.crm.writes()).countsByKey[await keyOf(e, jobId, 'update-crm-customer')]).toBe(1);
      expect((await e.billing.writes()).count).toBe(0);
    } finally {
      await e.crm.setFaults({ slowMs: 0 });
    }
  });

  it('looks again when the final check cannot conclude, and succeeds once the shop is back', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'finish-inconclusive-once';
    const stop = shopDownAfterPlaceOrder(jobId);
    try {
      await submitCheckout(e, { jobId, account: 'acct_demo_shop' });
      await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 240_000 });
      await approve(e, jobId, 'place-order');
      await waitForJob(e, jobId, ({ entries }) => ofType(entries, 'finish-check').length > 0, {
        timeoutMs: 120_000,
        what: 'an inconclusive final check',
      });
      e.stack.sites.setFaults('shop', { unavailable: false });
      const { job, entries } = await waitForJob(e, jobId, ({ job: j }) => j.status === 'SUCCEEDED', {
        timeoutMs: 120_000,
        what: 'SUCCEEDED',
      });
      expect(job.failure).toBeUndefined();
      expect(ofType(entries, 'finish-check')[0]?.detail).toMatchObject({ finding: 'unknown', check: 1 });
      expect((await e.shop.writes()).countsByKey[await keyOf(e, jobId, 'place-order')]).toBe(1);
    } finally {
      stop();
      e.stack.sites.setFaults('shop', { unavailable: false });
    }
  });

  it('asks a person when the final check stays inconclusive, and succeeds on their word; never FAILED', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'finish-inconclusive';
    const stop = shopDownAfterPlaceOrder(jobId);
    try {
      await submitCheckout(e, { jobId, account: 'acct_demo_shop' });
      await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 240_000 });
      await approve(e, jobId, 'place-order');
      const waiting = await waitForJob(e, jobId, waitingAt('review', 'place-order'), {
        timeoutMs: 120_000,
        what: 'a review of the final check',
      });
      expect(waiting.job.wait?.reason).toBe('inconclusive');
      expect(ofType(waiting.entries, 'finish-check')).toHaveLength(2);
      e.stack.sites.setFaults('shop', { unavailable: false });
      await approve(e, jobId, 'place-order', 'done');
      const { job, entries } = await waitForJob(e, jobId, ({ job: j }) => j.status === 'SUCCEEDED', {
        timeoutMs: 120_000,
        what: 'SUCCEEDED',
      });
      expect(job.failure).toBeUndefined();
      const succeeded = ofType(entries, 'succeeded')[0];
      expect(succeeded?.detail?.verified).toMatchObject({
        'place-order': { reviewedBy: expect.any(String) },
      });
      expect((await e.shop.writes()).countsByKey[await keyOf(e, jobId, 'place-order')]).toBe(1);
    } finally {
      stop();
      e.stack.sites.setFaults('shop', { unavailable: false });
    }
  });
});
