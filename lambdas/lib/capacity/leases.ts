import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, TransactionCanceledException } from '../aws/sdk/client-dynamodb.ts';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '../aws/sdk/lib-dynamodb.ts';
import { queryAll } from '../dynamo/query.ts';
import { isPlanName, PLAN_CAPS, type PlanName } from './plans.ts';
import { maxPollSeconds } from './poll.ts';
import { queuedAhead, sharesAccount } from './queue.ts';
import type { AcquireOptions, AcquireResult, Capacity, RenewOptions } from './types.ts';

/**
 * Browser leases in DynamoDB. One lease item per job (holding as many sessions as the job
 * has applications) under the tenant's capacity partition; a `STATE` item whose version
 * every acquire and release bumps, so two acquirers racing for the last slot cannot both
 * win. A lease not renewed within its TTL has expired: its holder died, and the slot is
 * free again without anyone cleaning up (locally, where DynamoDB Local never deletes
 * expired items, expiry is a read-time filter; in AWS the table's TTL removes them later).
 *
 * Jobs over the cap wait in submission order: a job may take a slot only when the QUEUED
 * jobs submitted before it fit as well. A QUEUED job that stopped asking (its execution is
 * gone) drops out of the queue after `queueGraceSeconds`; a waiting job records each time it
 * asks on its job item (`capacityAskedAt`, written by Start). With `serializeAccounts`, a job also waits while
 * another job holds a lease on one of its accounts (and such a blocked job holds no one
 * behind it back).
 */
export interface LeaseCapacityOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
  /** How long a lease lives without renewal (default 900 s). */
  leaseTtlSeconds?: number;
  /** Plan of a tenant with no plan recorded. */
  defaultPlan?: PlanName;
  /** Overrides of the plans' caps (configurable per deployment). */
  caps?: Partial<Record<PlanName, number>>;
  /** How long a queued job waits before asking again. */
  pollSeconds?: number;
  /**
   * A QUEUED job that has not asked for a lease (nor been submitted) for this long is taken for
   * gone (its execution never started or was stopped) and holds no one back (default: three
   * times the longest pause between asks, `maxPollSeconds`: 180 s).
   */
  queueGraceSeconds?: number;
  /** One job at a time per connected account (`BELAY_SERIALIZE_ACCOUNTS`). */
  serializeAccounts?: boolean;
}

/** A lease as stored: which job holds how many sessions on which accounts, until when. */
export interface LeaseItem {
  jobId: string;
  sessions: number;
  accounts?: string[];
  acquiredAt?: string;
  /** Epoch seconds after which the lease is free again. */
  leaseExpiresAt: number;
}

/** Leases whose expiry one process remembers: the most recently used. */
const KNOWN_LEASES_KEPT = 1024;

/** The lease store, with what the API and tests read of it. */
export interface LeaseCapacity extends Capacity {
  status(tenantId: string): Promise<{ cap: number; held: number; leases: LeaseItem[] }>;
  capFor(tenantId: string): Promise<number>;
  queuePosition(tenantId: string, jobId: string, queuedAt: string): Promise<number>;
}

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const capPk = (tenantId: string): string => `T#${tenantId}#CAP`;
const leaseSk = (jobId: string): string => `L#${jobId}`;
const ROUNDS = 5;

export function createLeaseCapacity(options: LeaseCapacityOptions): LeaseCapacity {
  const { doc, tableName } = options;
  const clock = options.clock ?? (() => new Date());
  const ttl = options.leaseTtlSeconds ?? 900;
  const caps: Record<PlanName, number> = { ...PLAN_CAPS, ...options.caps };
  const pollSeconds = options.pollSeconds ?? 5;
  const serialize = options.serializeAccounts === true;
  const graceSeconds = options.queueGraceSeconds ?? 3 * maxPollSeconds(pollSeconds);
  const liveness = () => ({ since: new Date(clock().getTime() - graceSeconds * 1000) });
  const nowSeconds = (): number => Math.floor(clock().getTime() / 1000);
  /**
   * Expiry of each lease this process took, renewed or read unexpired. Nobody else can take a
   * lease before it expires, and only the job's own handlers release it (no step of the job
   * runs after that until Start takes one again), so a renewal that is not yet due needs no
   * read: a warm worker's steps read the lease once, not once a step.
   */
  const known = new Map<string, number>();
  /** Remembers a lease's expiry; the most recently used {@link KNOWN_LEASES_KEPT} are kept (a warm worker serves many jobs). */
  const remember = (key: string, expiresAt: number): void => {
    known.delete(key);
    known.set(key, expiresAt);
    if (known.size > KNOWN_LEASES_KEPT) known.delete(known.keys().next().value as string);
  };
  const leaseKey = (tenantId: string, jobId: string): string => `${tenantId}\u0000${jobId}`;

  async function capFor(tenantId: string): Promise<number> {
    const res = await doc.send(
      new GetCommand({
        TableName: tableName,
        Key: { pk: `T#${tenantId}`, sk: 'TENANT' },
        ConsistentRead: true,
      }),
    );
    const item = res.Item as { plan?: unknown; browserCap?: unknown } | undefined;
    if (typeof item?.browserCap === 'number') return item.browserCap;
    const plan = isPlanName(item?.plan) ? item.plan : (options.defaultPlan ?? 'free');
    return caps[plan];
  }

  /** The STATE version and the live (unexpired) leases of the tenant. */
  async function readState(tenantId: string): Promise<{ version: number; leases: LeaseItem[] }> {
    const items = await queryAll(doc, {
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': capPk(tenantId) },
      ConsistentRead: true,
    });
    const state = items.find((i) => i.sk === 'STATE') as { version?: number } | undefined;
    const now = nowSeconds();
    const leases = items
      .filter((i) => typeof i.sk === 'string' && i.sk.startsWith('L#'))
      .map((i) => i as unknown as LeaseItem)
      .filter((l) => l.leaseExpiresAt > now);
    return { version: state?.version ?? 0, leases };
  }

  function stateUpdate(tenantId: string, version: number): TransactItem {
    return {
      Update: {
        TableName: tableName,
        Key: { pk: capPk(tenantId), sk: 'STATE' },
        UpdateExpression: 'SET version = :next',
        ConditionExpression: 'attribute_not_exists(version) OR version = :seen',
        ExpressionAttributeValues: { ':next': version + 1, ':seen': version },
      },
    };
  }

  async function acquire(tenantId: string, jobId: string, request: AcquireOptions): Promise<AcquireResult> {
    const { sessions, queuedAt } = request;
    const accounts = [...new Set(request.accounts ?? [])];
    for (let round = 0; round < ROUNDS; round++) {
      const [{ version, leases }, cap] = await Promise.all([readState(tenantId), capFor(tenantId)]);
      if (leases.some((l) => l.jobId === jobId)) {
        await renew(tenantId, jobId);
        return { outcome: 'acquired' };
      }
      const held = leases.reduce((sum, l) => sum + l.sessions, 0);
      const ahead = await queuedAhead(doc, tableName, tenantId, jobId, queuedAt, liveness());
      const position = ahead.length + 1;
      let competing = ahead.length;
      if (serialize) {
        const heldAccounts = new Set(leases.flatMap((l) => l.accounts ?? []));
        if (sharesAccount(accounts, heldAccounts)) {
          return { outcome: 'queued', position, retryAfterSeconds: pollSeconds, reason: 'account' };
        }
        // A job ahead that waits for its account cannot take a slot now: it holds no one back.
        competing = ahead.filter((j) => !sharesAccount(j.accounts, heldAccounts)).length;
      }
      // Strict submission order: a job takes a slot only when no job queued before it (that could
      // take one) is still waiting, and the slot is free.
      if (competing > 0 || held + sessions > cap) {
        return { outcome: 'queued', position, retryAfterSeconds: pollSeconds, reason: 'cap' };
      }
      const expiresAt = nowSeconds() + ttl;
      try {
        await doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: tableName,
                  Item: {
                    pk: capPk(tenantId),
                    sk: leaseSk(jobId),
                    jobId,
                    sessions,
                    accounts,
                    acquiredAt: clock().toISOString(),
                    leaseExpiresAt: expiresAt,
                  },
                },
              },
              stateUpdate(tenantId, version),
            ],
          }),
        );
        remember(leaseKey(tenantId, jobId), expiresAt);
        return { outcome: 'acquired' };
      } catch (err) {
        if (!(err instanceof TransactionCanceledException)) throw err;
        // Another acquire or release went first: look again.
      }
    }
    return { outcome: 'queued', position: 1, retryAfterSeconds: 1, reason: 'cap' };
  }

  async function renew(tenantId: string, jobId: string, renewal: RenewOptions = {}): Promise<boolean> {
    const now = nowSeconds();
    const expires = now + (renewal.forSeconds ?? ttl);
    const key = leaseKey(tenantId, jobId);
    const seen = known.get(key);
    if (
      seen !== undefined &&
      renewal.ifRemainingBelow !== undefined &&
      seen - now >= renewal.ifRemainingBelow
    )
      return true;
    const res = await doc.send(
      new GetCommand({
        TableName: tableName,
        Key: { pk: capPk(tenantId), sk: leaseSk(jobId) },
        ConsistentRead: true,
      }),
    );
    const lease = res.Item as LeaseItem | undefined;
    // An expired lease is not the holder's any more (its slot may be another job's by now),
    // even while DynamoDB's TTL has not deleted the item yet: it is never extended again.
    if (!lease || lease.leaseExpiresAt <= now) {
      known.delete(key);
      return false;
    }
    remember(key, lease.leaseExpiresAt);
    if (renewal.ifRemainingBelow !== undefined && lease.leaseExpiresAt - now >= renewal.ifRemainingBelow) {
      return true;
    }
    if (lease.leaseExpiresAt >= expires) return true;
    try {
      // Never shortens a lease (a wait may have extended it further than a step would).
      await doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: capPk(tenantId), sk: leaseSk(jobId) },
          UpdateExpression: 'SET leaseExpiresAt = :exp, renewedAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND leaseExpiresAt > :now AND leaseExpiresAt < :exp',
          ExpressionAttributeValues: { ':exp': expires, ':now': now, ':at': clock().toISOString() },
        }),
      );
      remember(key, expires);
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      // Extended further by someone else (a wait), or expired in between.
      return lease.leaseExpiresAt > nowSeconds();
    }
    return true;
  }

  async function release(tenantId: string, jobId: string): Promise<void> {
    known.delete(leaseKey(tenantId, jobId));
    for (let round = 0; round < ROUNDS; round++) {
      const { version } = await readState(tenantId);
      try {
        await doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Delete: { TableName: tableName, Key: { pk: capPk(tenantId), sk: leaseSk(jobId) } } },
              stateUpdate(tenantId, version),
            ],
          }),
        );
        return;
      } catch (err) {
        if (!(err instanceof TransactionCanceledException)) throw err;
      }
    }
  }

  async function status(tenantId: string): Promise<{ cap: number; held: number; leases: LeaseItem[] }> {
    const [{ leases }, cap] = await Promise.all([readState(tenantId), capFor(tenantId)]);
    return { cap, held: leases.reduce((s, l) => s + l.sessions, 0), leases };
  }

  async function queuePosition(tenantId: string, jobId: string, queuedAt: string): Promise<number> {
    return (await queuedAhead(doc, tableName, tenantId, jobId, queuedAt, liveness())).length + 1;
  }

  return { acquire, renew, release, status, capFor, queuePosition };
}
