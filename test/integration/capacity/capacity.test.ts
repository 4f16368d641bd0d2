/**
 * Browser capacity on the real local stack: a tenant on a plan capped at 2 concurrent
 * browsers submits five checkouts; never more than two browsers run, the others wait in
 * QUEUED with their place shown by the API and start in submission order. A lease whose
 * holder died (worker SIGKILLed, execution gone, browser gone) expires and its slot is reused;
 * a live job whose lease expired while the cap is full gives its browser back and queues again.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import { type Cost, type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import type { FaultPointEvent } from '../../../local/lambda/events.ts';
import { localFunctionArn } from '../../../local/stack.ts';
import { armKill } from '../../support/faults.ts';
import { sleep } from '../../support/fixtures.ts';
import { diagnose, executionsOf } from '../../support/jobs.ts';
import { keyOf, ofType } from '../../support/records.ts';
import {
  api,
  approveApi,
  connectShopAccount,
  peakSessions,
  runningSessions,
  submitCheckoutApi,
  useApiStack,
  waitForStatus,
} from '../accounts/support.ts';

const LEASE_TTL = 60;
const stack = useApiStack({
  BELAY_PLAN_CAPS: JSON.stringify({ free: 2 }),
  BELAY_LEASE_TTL_SECONDS: String(LEASE_TTL),
  BELAY_PARK_AFTER_SECONDS: '900',
});

type S = ReturnType<typeof stack>;
const leases = (s: S) => createLeaseCapacity({ doc: s.stack.doc, tableName: s.stack.tableName });

/** When the job first opened a browser (its lease was taken just before). */
async function sessionOpenedAt(s: S, jobId: string): Promise<number> {
  const { entries } = await s.ledger.readJob('demo', jobId);
  const opened = ofType(entries, 'session-opened')[0];
  if (!opened) throw new Error(`job ${jobId} never opened a session`);
  return Date.parse(opened.at);
}

/** Approves place-order as each job gets there (except `hold`), until every job SUCCEEDED. */
async function drive(
  s: S,
  jobIds: string[],
  hold: Set<string> = new Set(),
  timeoutMs = 420_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let done = 0;
    for (const jobId of jobIds) {
      const job = await s.ledger.getJob('demo', jobId);
      if (job.status === 'SUCCEEDED') done += 1;
      else if (job.status === 'FAILED' || job.status === 'CANCELLED')
        throw new Error(`job ${jobId} ended ${job.status}\n${await diagnose(s, jobId)}`);
      else if (job.wait?.kind === 'approval' && job.wait.step === 'place-order' && !hold.has(jobId)) {
        await approveApi(s, s.demoKey, jobId, 'place-order');
      } else if (job.wait && job.wait.kind !== 'approval') {
        throw new Error(`job ${jobId} waits for ${job.wait.kind}\n${await diagnose(s, jobId)}`);
      }
    }
    if (done === jobIds.length) return;
    if (Date.now() > deadline) {
      throw new Error(`timed out:\n${(await Promise.all(jobIds.map((j) => diagnose(s, j)))).join('\n')}`);
    }
    await sleep(300);
  }
}

const sumCosts = (entries: readonly LedgerEntry[]): Cost =>
  entries.reduce(
    (sum, e) => {
      for (const k of Object.keys(sum) as (keyof Cost)[]) sum[k] += e.cost[k];
      return sum;
    },
    { ...ZERO_COST },
  );

describe('Capacity: a plan capped at 2 browsers', () => {
  it('runs five checkouts with never more than two browsers, the rest QUEUED with their place, started in order', {
    timeout: 600_000,
  }, async () => {
    const s = stack();
    const from = new Date(Date.now() - 1000).toISOString();
    const created = [];
    for (const shopper of ['shopper18@example.com', 'shopper19@example.com', 'shopper20@example.com']) {
      created.push(await connectShopAccount(s, s.demoKey, shopper));
    }
    const accounts = ['acct_demo_shop', 'acct_demo_shop_totp', ...created];
    const jobs = accounts.map((_, i) => `cap-${i + 1}`);
    {
      for (const [i, jobId] of jobs.entries())
        await submitCheckoutApi(s, s.demoKey, jobId, accounts[i] as string);

      // Once the first two hold the slots, the other three wait in QUEUED, in submission order.
      // (Both must have taken their slot: the second may take one while the first's acquire is still in flight.)
      for (const first of ['cap-1', 'cap-2']) {
        await expect
          .poll(async () => (await s.ledger.getJob('demo', first)).status, {
            timeout: 180_000,
            interval: 250,
          })
          .not.toBe('QUEUED');
      }
      const queued = await Promise.all(jobs.slice(2).map((j) => api(s, 'GET', `/jobs/${j}`, s.demoKey)));
      expect(queued.map((r) => r.json.job.status)).toEqual(['QUEUED', 'QUEUED', 'QUEUED']);
      expect(queued.map((r) => r.json.job.queue.position)).toEqual([1, 2, 3]);
      // Waiting since they were submitted.
      expect(queued.map((r) => r.json.job.queue.since)).toEqual(queued.map((r) => r.json.job.createdAt));
      expect((await api(s, 'GET', '/jobs/cap-1', s.demoKey)).json.job.queue).toBeUndefined();

      await drive(s, jobs);
    }
    // From the browser service's own start and end times of every session of these jobs.
    const { peak, jobs: atPeak } = peakSessions(s, jobs);
    expect(peak, `browsers at the peak: ${atPeak.join(', ')}`).toBe(2);

    // Started in order: the queued three left the queue one after another, each after a slot was
    // freed. (startedAt is when a job took its lease; its session may open later than the next
    // job's, so the session-opened times do not give the order.)
    const starts = await Promise.all(
      jobs.map(async (j) => Date.parse((await api(s, 'GET', `/jobs/${j}`, s.demoKey)).json.job.startedAt)),
    );
    for (const [i, jobId] of jobs.entries()) {
      expect(starts[i], jobId).toBeLessThanOrEqual(await sessionOpenedAt(s, jobId));
    }
    const finishes = await Promise.all(
      jobs.map(async (j) => Date.parse((await s.ledger.getJob('demo', j)).finishedAt ?? '')),
    );
    expect(Math.max(starts[0] as number, starts[1] as number)).toBeLessThan(starts[2] as number);
    expect(starts[2]).toBeLessThan(starts[3] as number);
    expect(starts[3]).toBeLessThan(starts[4] as number);
    expect(starts[2]).toBeGreaterThanOrEqual(Math.min(finishes[0] as number, finishes[1] as number));

    // One order each; every lease given back.
    const writes = await s.shop.writes();
    for (const jobId of jobs) expect(writes.countsByKey[await keyOf(s, jobId, 'place-order')], jobId).toBe(1);
    // Finish ends the sessions, then releases the lease, just after the job is SUCCEEDED.
    await expect.poll(async () => (await leases(s).status('demo')).leases, { timeout: 20_000 }).toEqual([]);

    // The cost report over these jobs adds up their ledgers.
    const to = new Date(Date.now() + 1000).toISOString();
    const report = await api(s, 'GET', `/reports/cost?from=${from}&to=${to}`, s.demoKey);
    expect(report.status).toBe(200);
    const ledgers = await Promise.all(jobs.map((j) => s.ledger.readJob('demo', j)));
    const usage = sumCosts(ledgers.flatMap((l) => l.entries));
    expect(report.json.jobs).toEqual({ total: 5, byStatus: { SUCCEEDED: 5 } });
    expect(report.json.verifiedCompletions).toBe(5);
    expect(report.json.humanInterventions).toBe(5);
    expect(report.json.usage.lambdaInvocations).toBe(usage.lambdaInvocations);
    expect(report.json.usage.stateTransitions).toBe(usage.stateTransitions);
    expect(report.json.usage.dynamoWrites).toBe(usage.dynamoWrites);
    expect(report.json.browser.activeSeconds).toBeCloseTo(usage.browserSeconds, 2);
    // Each job waited for its approval with its browser open: idle time the report shows.
    expect(report.json.browser.idleSeconds).toBeGreaterThan(0);
    expect(report.json.costPerVerifiedCompletion).toBeCloseTo(report.json.cost.total / 5, 8);
  });

  it('expires the lease of a killed worker and gives its slot to the next queued job', {
    timeout: 480_000,
  }, async () => {
    const s = stack();
    const [dead, holder, next] = ['lease-dead', 'lease-holder', 'lease-next'];
    const KILL_AT = 2; // search: signed in, browser open, lease held
    let lease: { leaseExpiresAt: number } | undefined;
    let killedAt = 0;
    armKill(s, dead, KILL_AT, 'before-action');
    // The recovery function would resume the stopped execution at once (the rule on the machine's
    // status changes); this is the fallback for when that event never arrives: the lease's expiry.
    const recoveryRules = s.stack.events
      .rules()
      .filter((r) => JSON.stringify(r.pattern ?? {}).includes('aws.states'));
    expect(recoveryRules.length).toBeGreaterThan(0);
    for (const r of recoveryRules) r.enabled = false;
    onTestFinished(() => {
      for (const r of recoveryRules) r.enabled = true;
    });
    const onPoint = (e: FaultPointEvent): void => {
      if (e.info.jobId !== dead || e.info.stepIndex !== KILL_AT || e.point !== 'before-action') return;
      s.stack.lambdas.events.off('fault-point', onPoint);
      // The whole holder dies: its execution, its browser, and (armed) its worker process.
      killedAt = Date.now();
      for (const x of executionsOf(s, dead)) s.stack.sfn.stopExecution(x.executionArn);
      const session = runningSessions(s).find((r) => r.jobId === dead);
      if (session) void s.stack.anchor.killBrowser(session.id);
    };
    s.stack.lambdas.events.on('fault-point', onPoint);
    {
      await submitCheckoutApi(s, s.demoKey, dead, 'acct_demo_shop');
      await expect.poll(() => killedAt, { timeout: 180_000 }).toBeGreaterThan(0);
      lease = (await leases(s).status('demo')).leases.find((l) => l.jobId === dead);
      expect(lease, 'the dead holder still has its lease').toBeDefined();

      await submitCheckoutApi(s, s.demoKey, holder, 'acct_demo_shop_totp');
      await expect
        .poll(async () => (await s.ledger.getJob('demo', holder)).status, { timeout: 180_000, interval: 250 })
        .not.toBe('QUEUED');
      await submitCheckoutApi(
        s,
        s.demoKey,
        next,
        await connectShopAccount(s, s.demoKey, 'shopper15@example.com'),
      );
      const waiting = await api(s, 'GET', `/jobs/${next}`, s.demoKey);
      expect(waiting.json.job).toMatchObject({ status: 'QUEUED', queue: { position: 1 } });

      // The holder keeps its slot (its approval is held back); only the dead lease's expiry frees one.
      await drive(s, [next], new Set(), 300_000).catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${await diagnose(s, holder)}`);
      });
      // It took the slot once the dead lease had expired (a lease is live while now < leaseExpiresAt).
      const nextStart = Date.parse((await s.ledger.getJob('demo', next)).startedAt ?? '');
      expect(nextStart).toBeGreaterThanOrEqual((lease?.leaseExpiresAt ?? Number.NaN) * 1000);
      expect((await s.ledger.getJob('demo', holder)).status).not.toBe('SUCCEEDED');
      await drive(s, [holder]);
    }
    const { peak, jobs: atPeak } = peakSessions(s, [dead, holder, next]);
    expect(peak, `browsers at the peak: ${atPeak.join(', ')}`).toBeLessThanOrEqual(2);
    expect((await s.ledger.getJob('demo', dead)).status).toBe('RUNNING');
    const cancelled = await api(s, 'POST', `/jobs/${dead}/cancel`, s.demoKey);
    expect(cancelled.status).toBe(200);
    // The cancellation ends the job's sessions and gives its lease back.
    await expect.poll(async () => (await leases(s).status('demo')).leases, { timeout: 20_000 }).toEqual([]);
  });
  it('gives back the browser of a job whose lease expired while the cap is full, queues it, and resumes it from its profile with one order', {
    timeout: 300_000,
  }, async () => {
    const s = stack();
    const jobId = 'lease-lost';
    await submitCheckoutApi(s, s.demoKey, jobId, 'acct_demo_shop');
    await waitForStatus(s, 'demo', jobId, 'WAITING_APPROVAL', 180_000);
    const [first] = runningSessions(s).filter((r) => r.jobId === jobId);
    expect(first, 'the job waits for its approval with its browser open').toBeDefined();

    // As if nothing had renewed the job's lease for a whole TTL, and another holder took the
    // tenant's two slots meanwhile.
    await leases(s).release('demo', jobId);
    const blocker = await leases(s).acquire('demo', 'lease-blocker', {
      sessions: 2,
      queuedAt: new Date().toISOString(),
    });
    expect(blocker).toEqual({ outcome: 'acquired' });
    // A whole TTL later, no worker still holds what it last knew of the lease (a process trusts
    // a lease it took or renewed until that expiry): the warm RunSteps go as that time would.
    await s.stack.lambdas.retireIdle(localFunctionArn('RunStep'));

    await approveApi(s, s.demoKey, jobId, 'place-order');
    // RunStep finds the lease gone and the cap full: it ends the session and queues again.
    await waitForStatus(s, 'demo', jobId, 'QUEUED', 60_000);
    await expect
      .poll(
        async () =>
          ofType((await s.ledger.readJob('demo', jobId)).entries, 'parked').map((e) => e.detail?.reason),
        { timeout: 20_000 },
      )
      .toEqual(['lease-lost']);
    expect(runningSessions(s).filter((r) => r.jobId === jobId)).toEqual([]);
    // Queued again since it lost its lease, not since its submission.
    const requeued = (await api(s, 'GET', `/jobs/${jobId}`, s.demoKey)).json.job;
    expect(requeued.queue.position).toBe(1);
    expect(Date.parse(requeued.queue.since)).toBeGreaterThan(Date.parse(requeued.startedAt));
    expect((await s.shop.writes()).countsByKey[await keyOf(s, jobId, 'place-order')]).toBeUndefined();

    // A slot frees: a new session from the account's profile, and the approved order is placed once.
    await leases(s).release('demo', 'lease-blocker');
    await drive(s, [jobId], new Set(), 180_000);
    const { entries } = await s.ledger.readJob('demo', jobId);
    const opened = ofType(entries, 'session-opened');
    expect(opened).toHaveLength(2);
    expect(opened[1]?.sessionId).not.toBe(first?.id);
    const completed = ofType(entries, 'step-completed').map((e) => e.step);
    expect(new Set(completed).size).toBe(completed.length);
    expect(completed).toHaveLength(14);
    expect((await s.shop.writes()).countsByKey[await keyOf(s, jobId, 'place-order')]).toBe(1);
    await expect.poll(async () => (await leases(s).status('demo')).leases, { timeout: 20_000 }).toEqual([]);
  });
});
