/**
 * A site that does not de-duplicate, and a browser that sends a write again by itself.
 *
 * The shop, no longer de-duplicating by key, commits the order, then resets (or closes) the
 * connection without a byte of response. Chromium answers such a failure on a reused
 * connection by sending the same POST again on another one, below anything a page script or
 * `page.route` sees, and the shop commits a second order. Each layer of the engine's answer is
 * checked on its own:
 * - the write guard's prevention (default): each write request goes out on a fresh
 *   connection, so the site receives it once: one order, SUCCEEDED;
 * - detection only (`BELAY_WRITE_GUARD=detect`): the browser's resend is seen in its network
 *   log, the step is not trusted, the probe counts two orders and a person is asked;
 * - neither (`off`): the step verifies against the second copy's page, but Finish's check
 *   counts the orders and asks a person instead of reporting success.
 * In no case is a job whose write reached the site twice reported as one verified write.
 */
import { describe, expect, it } from 'vitest';
import { type EngineStack, useEngineStack } from '../../support/engine-stack.ts';
import { approve, diagnose, submitCheckout, waitForJob, waitingAt } from '../../support/jobs.ts';
import { keyOf, ofType } from '../../support/records.ts';

const prevent = useEngineStack();
const detectOnly = useEngineStack({ env: { BELAY_WRITE_GUARD: 'detect' } });
const off = useEngineStack({ env: { BELAY_WRITE_GUARD: 'off' } });

/** Runs a checkout whose place-order response the shop drops with no byte; returns the job and its orders. */
async function dropWithNoByte(e: EngineStack, jobId: string, dropMode: 'reset' | 'close') {
  await e.shop.setFaults({ dedupe: false });
  try {
    await submitCheckout(e, { jobId, account: 'acct_demo_shop' });
    await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 240_000 });
    await e.shop.setFaults({ dropNextWriteResponse: true, dropMode });
    await approve(e, jobId, 'place-order');
    const view = await waitForJob(
      e,
      jobId,
      ({ job }) => job.status === 'SUCCEEDED' || job.wait?.kind === 'review',
      { timeoutMs: 120_000, what: 'SUCCEEDED or a review' },
    );
    const writes = await e.shop.writes();
    return { view, orders: writes.countsByKey[await keyOf(e, jobId, 'place-order')] ?? 0 };
  } finally {
    await e.shop.setFaults({ dedupe: true, dropNextWriteResponse: false, dropMode: 'status-line' });
  }
}

describe('Engine: a write the browser sends again, on a site that does not de-duplicate', () => {
  it.each([['reset'], ['close']] as const)(
    'prevents it (%s): the write reaches the site once, the job SUCCEEDED with the guard recorded',
    { timeout: 300_000 },
    async (dropMode) => {
      const e = prevent();
      const jobId = `resend-prevent-${dropMode}`;
      const { view, orders } = await dropWithNoByte(e, jobId, dropMode);
      expect(orders, await diagnose(e, jobId)).toBe(1);
      expect(view.job.status).toBe('SUCCEEDED');
      // The dropped response leaves the attempt unconfirmed; the guard's report is on its entry.
      const attempt = view.entries.find((x) => x.step === 'place-order' && x.type === 'step-unconfirmed');
      expect(attempt?.detail?.writeGuard).toMatchObject({ prevented: true, observed: true });
      expect(view.job.retriesUsed).toBe(0);
    },
  );

  it('with detection only, sees the resend and asks a person about the two orders', {
    timeout: 300_000,
  }, async () => {
    const e = detectOnly();
    const jobId = 'resend-detect';
    const { view, orders } = await dropWithNoByte(e, jobId, 'reset');
    expect(orders).toBe(2);
    expect(view.job.status, await diagnose(e, jobId)).toBe('WAITING_REVIEW');
    expect(view.job.wait).toMatchObject({ kind: 'review', step: 'place-order', reason: 'duplicate' });
    expect(ofType(view.entries, 'step-completed').map((c) => c.step)).not.toContain('place-order');
    const failed = ofType(view.entries, 'step-failed');
    expect(failed).toEqual([]);
  });

  it('with no guard at all, Finish counts the orders and asks a person instead of succeeding', {
    timeout: 300_000,
  }, async () => {
    const e = off();
    const jobId = 'resend-off';
    const { view, orders } = await dropWithNoByte(e, jobId, 'reset');
    expect(orders).toBe(2);
    expect(view.job.status, await diagnose(e, jobId)).toBe('WAITING_REVIEW');
    expect(view.job.wait).toMatchObject({ kind: 'review', step: 'place-order', reason: 'duplicate' });
    expect(ofType(view.entries, 'succeeded')).toEqual([]);
  });
});
