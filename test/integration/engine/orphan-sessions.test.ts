/**
 * A browser session the engine started but never recorded (the create's response lost, the
 * worker dead before it wrote the id) does not live on to count against the plan: the next
 * opening for the job finds it by its tags and ends it. The local stack, with the Anchor
 * service filtering by tags as Anchor does.
 */
import { describe, expect, it } from 'vitest';
import { createBrowserAdapter } from '../../../lambdas/lib/browser/adapter.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { TENANT } from '../../support/fixtures.ts';
import { runToSuccess, submitCheckout, waitForJob, waitingAt } from '../../support/jobs.ts';

const engine = useEngineStack();

describe('Orphaned sessions', () => {
  it('are ended by the job’s next session opening; other jobs’ sessions are left alone', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const { anchor } = e.stack;
    const browser = createBrowserAdapter({ apiKey: anchor.apiKey, baseUrl: anchor.baseUrl });
    const jobId = 'orphaned-session';
    const tags = { tenantId: TENANT, jobId, application: 'shop', attempt: '0' };
    // What a create whose response was lost leaves: a running session tagged with the job.
    const orphan = await browser.openSession({ idleTimeoutMinutes: 30, maxDurationMinutes: 60, tags });
    const other = await browser.openSession({
      idleTimeoutMinutes: 30,
      maxDurationMinutes: 60,
      tags: { ...tags, jobId: 'another-job' },
    });
    expect(await browser.runningSessions({ tenantId: TENANT, jobId, application: 'shop' })).toEqual([
      orphan.sessionId,
    ]);

    await submitCheckout(e, { jobId });
    const view = await runToSuccess(e, jobId);
    expect(view.job.status).toBe('SUCCEEDED');
    expect(view.job.sessions.shop?.sessionId).not.toBe(orphan.sessionId);
    expect(await browser.isAlive(orphan.sessionId)).toBe(false);
    expect(await browser.isAlive(other.sessionId)).toBe(true);
    await browser.endSession(other.sessionId);
  });

  it('are ended when the job finishes, when one appeared after its last opening', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const { anchor } = e.stack;
    const browser = createBrowserAdapter({ apiKey: anchor.apiKey, baseUrl: anchor.baseUrl });
    const jobId = 'orphaned-late';
    await submitCheckout(e, { jobId });
    await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 150_000 });
    const orphan = await browser.openSession({
      idleTimeoutMinutes: 30,
      maxDurationMinutes: 60,
      tags: { tenantId: TENANT, jobId, application: 'shop', attempt: '99' },
    });
    const view = await runToSuccess(e, jobId);
    expect(view.job.status).toBe('SUCCEEDED');
    expect(await browser.isAlive(orphan.sessionId)).toBe(false);
  });
});
