/**
 * Telling people that a job waits is not part of the job: with EventBridge failing every
 * PutEvents of the wait (as it may: throttling, an internal error), the job still waits for
 * its approval and finishes once approved. Locally the notifier is the AWS one, on the local
 * event bus, where the failures are injected.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NOTIFY_ATTEMPTS } from '../../../lambdas/lib/engine/notifiers.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { runToSuccess, submitCheckout, waitForJob, waitingAt } from '../../support/jobs.ts';

const engine = useEngineStack();

const waitEventsOf = (jobId: string) =>
  engine()
    .stack.events.accepted.filter((e) => e['detail-type'] === 'Belay Job Waiting')
    .filter((e) => (e.detail as { jobId?: string }).jobId === jobId);

describe('Engine: wait notifications', () => {
  it('puts a bounded Belay Job Waiting event on the wait bus, with a link', {
    timeout: 180_000,
  }, async () => {
    const e = engine();
    const jobId = 'notify-ok';
    await submitCheckout(e, { jobId });
    await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 150_000 });
    // AwaitHuman records the wait, then tells of it: the event follows the status by a moment.
    for (let i = 0; i < 100 && waitEventsOf(jobId).length === 0; i++) await sleep(100);
    const [event] = waitEventsOf(jobId);
    expect(event?.detail).toMatchObject({ jobId, kind: 'approval', step: 'place-order' });
    expect(Buffer.byteLength(JSON.stringify(event?.detail))).toBeLessThan(64 * 1024);
    await runToSuccess(e, jobId);
  });

  it('keeps the job waiting, and finishes it once approved, when EventBridge fails every attempt', {
    timeout: 180_000,
  }, async () => {
    const e = engine();
    const jobId = 'notify-fails';
    await submitCheckout(e, { jobId, approvals: ['open-cart'] });
    // Every attempt of the first wait's notification fails, one way or another: the first is
    // throttled (the SDK itself tries it three times), the others are refused entry by entry.
    e.stack.events.inject('throttle', 3);
    e.stack.events.inject('failed-entry', NOTIFY_ATTEMPTS - 1);
    const { job } = await waitForJob(e, jobId, waitingAt('approval', 'open-cart'), { timeoutMs: 150_000 });
    expect(job.status).toBe('WAITING_APPROVAL');
    expect(waitEventsOf(jobId).filter((x) => (x.detail as { step?: string }).step === 'open-cart')).toEqual(
      [],
    );
    const view = await runToSuccess(e, jobId, { approveSteps: ['open-cart', 'place-order'] });
    expect(view.job.status).toBe('SUCCEEDED');
    // The next wait was told as usual.
    expect(waitEventsOf(jobId).map((x) => (x.detail as { step?: string }).step)).toEqual(['place-order']);
  });
});
