/**
 * Writes whose outcome the job cannot see, and pages it must not guess at.
 *
 * - The uncertain write: the shop commits the order but drops its response. The job reports
 *   `uncertain`, reconciles with the step's probe, finds the order and records the completion
 *   from it: one order-placing request, one order, SUCCEEDED.
 * - The changed layout: the shop switches to its other layout while the job waits before a
 *   step. The job stops in WAITING_REVIEW without acting on the changed page; once the layout
 *   is back and a reviewer approves, it finishes.
 *
 * The two share one shop (its faults are site-wide), so the layout is switched only after the
 * first job has finished.
 */
import { describe, expect, it } from 'vitest';
import { type EngineStack, useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_STEPS } from '../../support/fixtures.ts';
import {
  approve,
  historyOf,
  runToSuccess,
  submitCheckout,
  waitForJob,
  waitingAt,
} from '../../support/jobs.ts';
import {
  completedSteps,
  executionsPerStep,
  keyOf,
  ofType,
  reExecutedAfterCompletion,
} from '../../support/records.ts';

const engine = useEngineStack();

const DROPPED_JOB = 'uncertain-write';
const LAYOUT_JOB = 'changed-layout';
const SHIPPING_METHOD = CHECKOUT_STEPS.indexOf('shipping-method');

/** Settles when the uncertain-write test is done with the shop (whatever its outcome). */
let releaseShop: () => void = () => undefined;
const shopFree = new Promise<void>((resolve) => {
  releaseShop = resolve;
});

/** The RunStep/Reconcile outcomes the state machine routed on, in order. */
function routed(e: EngineStack, jobId: string, choice: string): { outcome?: string; step?: string }[] {
  return historyOf(e, jobId)
    .filter((h) => h.type === 'ChoiceStateEntered' && h.stateEnteredEventDetails?.name === choice)
    .map((h) => (JSON.parse(h.stateEnteredEventDetails?.input ?? '{}') as { result?: object }).result ?? {});
}

describe.concurrent('Engine: uncertain writes and changed pages', () => {
  it('probes after a dropped response, finds the order and records it without placing again', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = DROPPED_JOB;
    try {
      await submitCheckout(e, { jobId, account: 'acct_demo_shop' });
      await waitForJob(e, jobId, waitingAt('approval', 'place-order'), {
        timeoutMs: 240_000,
        what: 'the approval before place-order',
      });
      // The shop will commit the next order and drop its response.
      await e.shop.clearRequests();
      await e.shop.setFaults({ dropNextWriteResponse: true });
      await approve(e, jobId, 'place-order');
      const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 200_000 });

      expect(job.status).toBe('SUCCEEDED');
      expect((await e.shop.faults()).dropNextWriteResponse).toBe(false); // the fault was used
      // RunStep could not confirm the write: uncertain, then Reconcile's probe found it done.
      expect(routed(e, jobId, 'Route')).toContainEqual(
        expect.objectContaining({ outcome: 'uncertain', step: 'place-order' }),
      );
      expect(routed(e, jobId, 'ReconcileOutcome')).toContainEqual(
        expect.objectContaining({ outcome: 'done', step: 'place-order' }),
      );
      expect(routed(e, jobId, 'ReconcileOutcome').map((r) => r.outcome)).not.toContain('unknown');

      // The ledger: one intent, no "absent" finding, one completion recorded from the probe's evidence.
      const key = await keyOf(e, jobId, 'place-order');
      const orderEntries = entries.filter((x) => x.step === 'place-order');
      expect(ofType(orderEntries, 'step-started')).toHaveLength(1);
      expect(ofType(orderEntries, 'reconciled')).toEqual([]);
      const completion = ofType(orderEntries, 'step-completed');
      expect(completion).toHaveLength(1);
      expect(completion[0]?.evidence?.reconciled).toBe(true);
      expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
      expect(executionsPerStep(e, jobId).get(CHECKOUT_STEPS.length - 1)).toBe(1);

      // The shop's record: the one order the dropped response hid, and no second request for it.
      const writes = await e.shop.writes();
      expect(writes.countsByKey[key]).toBe(1);
      expect(writes.attemptsByKey[key]).toBe(1);
      expect(completion[0]?.evidence?.orderId).toBe(writes.items.find((o) => o.key === key)?.orderId);
      expect((await e.shop.requests()).postsByPath['/orders']).toBe(1);
    } finally {
      releaseShop();
    }
  });

  it('waits for review without acting when the layout changed, and finishes once approved', {
    timeout: 300_000,
  }, async ({ expect }) => {
    const e = engine();
    const jobId = LAYOUT_JOB;
    await submitCheckout(e, { jobId, account: 'acct_demo_shop_totp', approvals: ['shipping-method'] });
    await waitForJob(e, jobId, waitingAt('approval', 'shipping-method'), {
      timeoutMs: 240_000,
      what: 'the approval before shipping-method',
    });
    await shopFree;

    // The shop changes its layout while the job waits before shipping-method.
    await e.shop.clearRequests();
    const switchedAt = new Date().toISOString();
    await e.shop.setFaults({ changedLayout: true });
    await approve(e, jobId, 'shipping-method');
    const waiting = await waitForJob(e, jobId, waitingAt('review', 'shipping-method'), {
      timeoutMs: 120_000,
      what: 'WAITING_REVIEW at shipping-method',
    });
    expect(waiting.job.status).toBe('WAITING_REVIEW');
    expect(waiting.job.wait?.reason).toBe('layout_changed');
    expect(waiting.job.nextStep).toBe(SHIPPING_METHOD);
    // No action on the changed page: the shop received no POST after the switch, and the
    // job recorded nothing done at or after the step.
    const log = await e.shop.requests();
    expect
      .soft(log.requests.filter((r) => r.method === 'POST' && r.at >= switchedAt).map((r) => r.path))
      .toEqual([]);
    const sinceSwitch = waiting.entries.filter((x) => x.at >= switchedAt);
    expect(ofType(sinceSwitch, 'step-completed')).toEqual([]);
    expect(ofType(waiting.entries, 'step-started')).toEqual([]);
    expect(ofType(waiting.entries, 'review-requested').map((r) => r.detail?.reason)).toEqual([
      'layout_changed',
    ]);

    // The layout is back; a reviewer lets the job go on, and it finishes with one order.
    await e.shop.setFaults({ changedLayout: false });
    await approve(e, jobId, 'shipping-method');
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 200_000 });

    expect(job.status).toBe('SUCCEEDED');
    expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
    expect(reExecutedAfterCompletion(e, jobId, entries)).toEqual([]);
    expect(ofType(entries, 'review-recorded').map((r) => r.detail?.decision)).toEqual(['approve']);
    const runs = executionsPerStep(e, jobId);
    for (let i = 0; i < SHIPPING_METHOD; i++) expect(runs.get(i), CHECKOUT_STEPS[i]).toBe(1);
    const key = await keyOf(e, jobId, 'place-order');
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
  });
});
