/**
 * Browser leases against DynamoDB Local: the cap, the queue in submission order (without jobs
 * nobody asks for any more), conditional writes under racing acquirers, expiry of a lease nobody renews, renewal, and one job per
 * account when accounts are serialized.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createLeaseCapacity, type LeaseCapacityOptions } from '../../../lambdas/lib/capacity/leases.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { CHECKOUT_INPUTS } from '../../support/fixtures.ts';

const ddb = useDynamoDb();
const START = Date.parse('2026-11-02T09:00:00.000Z');

/** A tenant of its own per test, a clock the test moves, the ledger and the leases on it. */
function world(tenantId: string, options: Partial<LeaseCapacityOptions> = {}) {
  let now = START;
  const clock = (): Date => new Date(now);
  const ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName(), clock });
  const capacity = createLeaseCapacity({
    doc: ddb.doc(),
    tableName: ddb.tableName(),
    clock,
    leaseTtlSeconds: 30,
    caps: { free: 2 },
    ...options,
  });
  /** Submits a job (one second after the previous one), QUEUED as the API leaves it. */
  const submit = async (
    jobId: string,
    account = `acct-${jobId}`,
  ): Promise<{ jobId: string; queuedAt: string; accounts: string[] }> => {
    now += 1000;
    const { job } = await ledger.createJob(
      tenantId,
      jobId,
      {
        playbook: 'checkout@1',
        inputs: CHECKOUT_INPUTS,
        accounts: { shop: account },
        approvals: [],
        retryBudget: 3,
      },
      14,
    );
    return { jobId, queuedAt: job.createdAt, accounts: [account] };
  };
  /** Acquires as Start does: a job that gets its lease leaves QUEUED; one told to wait records that it asked. */
  const acquire = async (j: { jobId: string; queuedAt: string; accounts: string[] }) => {
    const result = await capacity.acquire(tenantId, j.jobId, {
      sessions: 1,
      queuedAt: j.queuedAt,
      accounts: j.accounts,
    });
    if (result.outcome === 'acquired')
      await ledger.transition(tenantId, j.jobId, 'RUNNING', { from: ['QUEUED'] }).catch(() => undefined);
    else await ledger.updateJob(tenantId, j.jobId, { set: { capacityAskedAt: clock().toISOString() } });
    return result;
  };
  return {
    ledger: ledger as Ledger,
    capacity,
    submit,
    acquire,
    advance: (seconds: number) => {
      now += seconds * 1000;
    },
    nowSeconds: () => Math.floor(now / 1000),
  };
}

describe('Capacity: leases on DynamoDB Local', () => {
  it('grants up to the cap and queues the rest in submission order, with their place', async () => {
    const w = world('t-cap');
    const [a, b, c, d] = [await w.submit('a'), await w.submit('b'), await w.submit('c'), await w.submit('d')];
    expect(await w.acquire(a)).toEqual({ outcome: 'acquired' });
    expect(await w.acquire(b)).toEqual({ outcome: 'acquired' });
    expect(await w.acquire(d)).toMatchObject({ outcome: 'queued', position: 2, reason: 'cap' });
    expect(await w.acquire(c)).toMatchObject({ outcome: 'queued', position: 1, reason: 'cap' });
    expect(await w.capacity.queuePosition('t-cap', 'd', d.queuedAt)).toBe(2);

    // A slot frees: the later job cannot jump the earlier one.
    await w.capacity.release('t-cap', 'a');
    expect(await w.acquire(d)).toMatchObject({ outcome: 'queued', position: 2 });
    expect(await w.acquire(c)).toEqual({ outcome: 'acquired' });
    expect(await w.capacity.queuePosition('t-cap', 'd', d.queuedAt)).toBe(1);
    // Idempotent: a job holding its lease is told so again; releasing twice is harmless.
    expect(await w.acquire(c)).toEqual({ outcome: 'acquired' });
    await w.capacity.release('t-cap', 'a');
    expect((await w.capacity.status('t-cap')).leases.map((l) => l.jobId).sort()).toEqual(['b', 'c']);
  });

  it('drops from the queue a QUEUED job nobody asks for any more, and gives it its place back when it asks', async () => {
    const w = world('t-gone', { caps: { free: 1 }, leaseTtlSeconds: 600, queueGraceSeconds: 60 });
    const [a, gone, waits, late] = [
      await w.submit('a'),
      await w.submit('gone'),
      await w.submit('waits'),
      await w.submit('late'),
    ];
    expect(await w.acquire(a)).toEqual({ outcome: 'acquired' });
    // Just submitted, `gone` counts as waiting even before its execution first asks.
    expect(await w.acquire(waits)).toMatchObject({ outcome: 'queued', position: 2 });
    expect(await w.acquire(late)).toMatchObject({ outcome: 'queued', position: 3 });
    // `waits` and `late` keep asking; `gone`'s execution never does.
    w.advance(40);
    expect(await w.acquire(waits)).toMatchObject({ outcome: 'queued', position: 2 });
    expect(await w.acquire(late)).toMatchObject({ outcome: 'queued', position: 3 });
    w.advance(25);
    expect(await w.acquire(waits)).toMatchObject({ outcome: 'queued', position: 1 });
    expect(await w.capacity.queuePosition('t-gone', 'late', late.queuedAt)).toBe(2);

    // The slot frees: `waits` takes it, `gone` holds nobody back.
    await w.capacity.release('t-gone', 'a');
    expect(await w.acquire(waits)).toEqual({ outcome: 'acquired' });
    expect((await w.ledger.getJob('t-gone', 'gone')).status).toBe('QUEUED');
    // Asking again (a resubmission started its execution), `gone` is back in its place: before `late`.
    expect(await w.acquire(gone)).toMatchObject({ outcome: 'queued', position: 1 });
    expect(await w.capacity.queuePosition('t-gone', 'late', late.queuedAt)).toBe(2);
    await w.capacity.release('t-gone', 'waits');
    expect(await w.acquire(late)).toMatchObject({ outcome: 'queued', position: 2 });
    expect(await w.acquire(gone)).toEqual({ outcome: 'acquired' });
  });

  it('never grants more than the cap to racing acquirers (conditional writes on the STATE version)', async () => {
    const w = world('t-race', { caps: { free: 3 } });
    const jobs = [];
    for (let i = 0; i < 8; i++) jobs.push(await w.submit(`r${i}`));
    // Resumed jobs (RUNNING, nobody ahead of them): each believes it fits when it looks.
    for (const j of jobs) await w.ledger.transition('t-race', j.jobId, 'RUNNING');
    const results = await Promise.all(
      jobs.map((j) => w.capacity.acquire('t-race', j.jobId, { sessions: 1, queuedAt: j.queuedAt })),
    );
    const acquired = results.filter((r) => r.outcome === 'acquired').length;
    expect(acquired).toBeGreaterThanOrEqual(1);
    expect(acquired).toBeLessThanOrEqual(3);
    expect((await w.capacity.status('t-race')).held).toBe(acquired);
  });

  it('expires a lease its holder stopped renewing, and gives the slot to the next job', async () => {
    const w = world('t-expire', { caps: { free: 1 } });
    const [a, b] = [await w.submit('a'), await w.submit('b')];
    expect(await w.acquire(a)).toEqual({ outcome: 'acquired' });
    const acquiredAt = w.nowSeconds();
    // The live holder renews once a third of the TTL has passed (as RunStep does before each step).
    w.advance(5);
    expect(await w.capacity.renew('t-expire', 'a', { ifRemainingBelow: 20 })).toBe(true);
    expect((await w.capacity.status('t-expire')).leases[0]?.leaseExpiresAt).toBe(acquiredAt + 30);
    w.advance(10);
    expect(await w.capacity.renew('t-expire', 'a', { ifRemainingBelow: 20 })).toBe(true);
    const renewedTo = w.nowSeconds() + 30;
    expect((await w.capacity.status('t-expire')).leases[0]?.leaseExpiresAt).toBe(renewedTo);

    // Then the holder dies: nobody renews. Until the lease runs out, the next job waits.
    w.advance(29);
    expect(await w.acquire(b)).toMatchObject({ outcome: 'queued', position: 1 });
    w.advance(1);
    expect(await w.acquire(b)).toEqual({ outcome: 'acquired' });
    expect((await w.capacity.status('t-expire')).leases.map((l) => l.jobId)).toEqual(['b']);
    expect((await w.capacity.status('t-expire')).held).toBe(1);
  });

  it('reads a lease it took or renewed only when its renewal is due (one read a job in a warm worker, not one a step)', async () => {
    const sent: string[] = [];
    const doc = ddb.doc();
    const counting = {
      send: (command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        return doc.send(command as never);
      },
    } as unknown as typeof doc;
    const w = world('t-known', { doc: counting });
    const a = await w.submit('a');
    expect(await w.acquire(a)).toEqual({ outcome: 'acquired' });
    // Steps before a third of the TTL has passed: no call at all.
    sent.length = 0;
    for (const seconds of [2, 3, 4]) {
      w.advance(seconds);
      expect(await w.capacity.renew('t-known', 'a', { ifRemainingBelow: 20 })).toBe(true);
    }
    expect(sent).toEqual([]);
    // Due: read, then renewed.
    w.advance(2);
    expect(await w.capacity.renew('t-known', 'a', { ifRemainingBelow: 20 })).toBe(true);
    expect(sent).toEqual(['GetCommand', 'UpdateCommand']);
    expect((await w.capacity.status('t-known')).leases[0]?.leaseExpiresAt).toBe(w.nowSeconds() + 30);
    // Released: never taken for held again without a read.
    await w.capacity.release('t-known', 'a');
    sent.length = 0;
    expect(await w.capacity.renew('t-known', 'a', { ifRemainingBelow: 20 })).toBe(false);
    expect(sent).toEqual(['GetCommand']);
  });

  it('extends a lease over a human wait, and a step never shortens it', async () => {
    const w = world('t-wait');
    const a = await w.submit('a');
    await w.acquire(a);
    await w.capacity.renew('t-wait', 'a', { forSeconds: 600 });
    const extended = w.nowSeconds() + 600;
    expect((await w.capacity.status('t-wait')).leases[0]?.leaseExpiresAt).toBe(extended);
    w.advance(10);
    await w.capacity.renew('t-wait', 'a');
    await w.capacity.renew('t-wait', 'a', { ifRemainingBelow: 20 });
    expect((await w.capacity.status('t-wait')).leases[0]?.leaseExpiresAt).toBe(extended);
    expect(await w.capacity.renew('t-wait', 'nobody')).toBe(false);
  });

  it('runs one job per account at a time when serialized, without holding back jobs on other accounts', async () => {
    const w = world('t-serial', { caps: { free: 5 }, serializeAccounts: true });
    const a = await w.submit('a', 'acct-x');
    const b = await w.submit('b', 'acct-x');
    const c = await w.submit('c', 'acct-y');
    expect(await w.acquire(a)).toEqual({ outcome: 'acquired' });
    expect(await w.acquire(b)).toMatchObject({ outcome: 'queued', position: 1, reason: 'account' });
    expect(await w.acquire(c)).toEqual({ outcome: 'acquired' });
    await w.capacity.release('t-serial', 'a');
    expect(await w.acquire(b)).toEqual({ outcome: 'acquired' });

    // Without serialization the same account runs twice at once.
    const free = world('t-parallel', { caps: { free: 5 } });
    const [x, y] = [await free.submit('x', 'acct-x'), await free.submit('y', 'acct-x')];
    expect(await free.acquire(x)).toEqual({ outcome: 'acquired' });
    expect(await free.acquire(y)).toEqual({ outcome: 'acquired' });
  });

  it("takes the cap from the tenant's plan (or its own browserCap), else the default plan", async () => {
    const capacity = createLeaseCapacity({
      doc: ddb.doc(),
      tableName: ddb.tableName(),
      caps: { starter: 30 },
    });
    const put = (tenantId: string, item: Record<string, unknown>) =>
      ddb.doc().send(
        new PutCommand({
          TableName: ddb.tableName(),
          Item: { pk: `T#${tenantId}`, sk: 'TENANT', tenantId, ...item },
        }),
      );
    await put('t-starter', { plan: 'starter' });
    await put('t-own', { plan: 'growth', browserCap: 7 });
    expect(await capacity.capFor('t-starter')).toBe(30);
    expect(await capacity.capFor('t-own')).toBe(7);
    expect(await capacity.capFor('t-nobody')).toBe(5);
  });
});
