/**
 * Parking on the real local stack: a checkout waits for its approval longer than
 * BELAY_PARK_AFTER_SECONDS, so it ends its browser (profile persisted) and releases its
 * lease; when the person approves, it takes a lease, opens a new session from the same
 * profile and finishes with exactly one order. A rejection while parked fails the job
 * without opening a browser again.
 */
import { describe, it } from 'vitest';
import { profileNameFor } from '../../../lambdas/lib/accounts/types.ts';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import { sleep } from '../../support/fixtures.ts';
import { historyOf, waitForExecutionEnd, waitForJob } from '../../support/jobs.ts';
import { keyOf, ofType } from '../../support/records.ts';
import { api, approveApi, runningSessions, submitCheckoutApi, useApiStack } from '../accounts/support.ts';

const PARK_AFTER = 3;
const stack = useApiStack({ BELAY_PARK_AFTER_SECONDS: String(PARK_AFTER) });
type S = ReturnType<typeof stack>;

const leaseOf = async (s: S, jobId: string) =>
  (await createLeaseCapacity({ doc: s.stack.doc, tableName: s.stack.tableName }).status('demo')).leases.find(
    (l) => l.jobId === jobId,
  );

/** Waits until the job has parked and its parked wait is armed (AwaitHuman stored the new token). */
async function parked(s: S, jobId: string): Promise<{ firstSession: string }> {
  const view = await waitForJob(s, jobId, ({ entries }) => ofType(entries, 'parked').length === 1, {
    timeoutMs: 240_000,
    what: 'parked at the approval of place-order',
  });
  const firstSession = ofType(view.entries, 'session-opened')[0]?.sessionId ?? '';
  if (firstSession === '') throw new Error(`job ${jobId} parked without having opened a session`);
  // The parked wait is armed once its AwaitHuman invocation returned (TaskSubmitted).
  const armed = (): boolean => {
    const history = historyOf(s, jobId);
    const entered = history.findLastIndex((h) => h.stateEnteredEventDetails?.name === 'AwaitParked');
    return entered >= 0 && history.slice(entered).some((h) => h.type === 'TaskSubmitted');
  };
  const deadline = Date.now() + 60_000;
  while (!armed()) {
    if (Date.now() > deadline) throw new Error(`the parked wait of ${jobId} was not armed in 60 s`);
    await sleep(200);
  }
  return { firstSession };
}

describe.concurrent('Parking during a long approval wait', () => {
  it('releases browser and lease, then resumes in a new session from the profile with one order', {
    timeout: 400_000,
  }, async ({ expect }) => {
    const s = stack();
    const jobId = 'park-approve';
    await submitCheckoutApi(s, s.demoKey, jobId, 'acct_demo_shop');
    const { firstSession } = await parked(s, jobId);
    const profile = profileNameFor('demo', 'shop', 'acct_demo_shop');

    // Parked: still waiting for the person, with no browser and no lease.
    const view = await api(s, 'GET', `/jobs/${jobId}`, s.demoKey);
    expect(view.json.job).toMatchObject({ status: 'WAITING_APPROVAL', sessions: {} });
    expect(view.json.job.wait).toMatchObject({ kind: 'approval', step: 'place-order' });
    expect(runningSessions(s).filter((r) => r.jobId === jobId)).toEqual([]);
    expect(await leaseOf(s, jobId)).toBeUndefined();
    const ended = s.stack.anchor.sessions().find((r) => r.id === firstSession);
    expect(ended).toMatchObject({
      status: 'completed',
      endReason: 'deleted',
      profile: { name: profile, persist: true },
    });

    const parkedAt = Date.now();
    const decided = await approveApi(s, s.demoKey, jobId, 'place-order');
    expect(decided.json).toMatchObject({ decision: 'approve', resumed: true });
    const done = await waitForJob(s, jobId, ({ job }) => job.status === 'SUCCEEDED', {
      timeoutMs: 240_000,
      what: 'SUCCEEDED after the approval',
    });
    expect((await waitForExecutionEnd(s, jobId)).status).toBe('SUCCEEDED');

    // A new session, from the same profile, did the write.
    const opened = ofType(done.entries, 'session-opened');
    expect(opened).toHaveLength(2);
    const second = opened[1]?.sessionId ?? '';
    expect(second).not.toBe(firstSession);
    expect(opened.map((o) => o.detail?.profile)).toEqual([profile, profile]);
    expect(s.stack.anchor.sessions().find((r) => r.id === second)?.profile?.name).toBe(profile);
    const placed = ofType(done.entries, 'step-completed').find((c) => c.step === 'place-order');
    expect(placed?.sessionId).toBe(second);
    expect(Date.parse(placed?.at ?? '')).toBeGreaterThan(parkedAt);

    // Asked once, parked once, decided once; exactly one order.
    expect(ofType(done.entries, 'approval-requested')).toHaveLength(1);
    expect(ofType(done.entries, 'parked')).toHaveLength(1);
    expect(ofType(done.entries, 'approval-recorded')).toHaveLength(1);
    const writes = await s.shop.writes();
    const key = await keyOf(s, jobId, 'place-order');
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);

    // The state machine's path: park, the parked wait, then a lease and a session again.
    const entered = historyOf(s, jobId)
      .filter((h) => h.type.endsWith('StateEntered'))
      .map((h) => h.stateEnteredEventDetails?.name);
    expect(entered.filter((n) => n === 'ParkWait')).toHaveLength(1);
    expect(entered.filter((n) => n === 'AwaitParked')).toHaveLength(1);
    // Start takes the lease and opens the session: at the beginning and after the parked wait
    // (it may ask more than once while other tests' jobs hold the slots: those end queued).
    const starts = historyOf(s, jobId)
      .filter((h) => h.type === 'TaskStateExited' && h.stateExitedEventDetails?.name === 'Start')
      .map(
        (h) =>
          (JSON.parse(h.stateExitedEventDetails?.output ?? '{}') as { start?: { outcome?: string } }).start,
      );
    expect(
      starts.filter((r) => r?.outcome === 'ready').map((r) => (r as { session?: string }).session),
    ).toEqual(['opened', 'opened']);
    expect(starts.every((r) => r?.outcome === 'ready' || r?.outcome === 'queued')).toBe(true);
    expect(entered.filter((n) => n === 'OpenSession')).toHaveLength(0);
    expect(await leaseOf(s, jobId)).toBeUndefined();
  });

  it('fails as rejected when the person rejects while the job is parked, opening no browser again', {
    timeout: 400_000,
  }, async ({ expect }) => {
    const s = stack();
    const jobId = 'park-reject';
    await submitCheckoutApi(s, s.demoKey, jobId, 'acct_demo_shop_totp');
    await parked(s, jobId);
    const res = await api(s, 'POST', `/jobs/${jobId}/decisions`, s.demoKey, {
      step: 'place-order',
      decision: 'reject',
      comment: 'not this week',
    });
    expect(res.status).toBe(200);
    const { job, entries } = await waitForJob(s, jobId, ({ job: j }) => j.status === 'FAILED', {
      timeoutMs: 60_000,
      what: 'FAILED after the rejection',
    });
    expect(job.failure?.reason).toBe('rejected');
    expect(ofType(entries, 'session-opened')).toHaveLength(1);
    expect(ofType(entries, 'step-started')).toEqual([]);
    expect((await s.shop.writes()).countsByKey[await keyOf(s, jobId, 'place-order')] ?? 0).toBe(0);
    expect(runningSessions(s).filter((r) => r.jobId === jobId)).toEqual([]);
    expect(await leaseOf(s, jobId)).toBeUndefined();
  });
});
