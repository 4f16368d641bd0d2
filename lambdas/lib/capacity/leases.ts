import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '../ledger/schema.ts';
import { isPlanName, PLAN_CAPS, type PlanName } from './plans.ts';
import type { AcquireResult, Capacity } from './types.ts';

/**
 * Browser leases in DynamoDB. One lease item per job (holding as many sessions as the job
 * has applications) under the tenant's capacity partition; a `STATE` item whose version
 * every acquire and release bumps, so two acquirers racing for the last slot cannot both
 * win. A lease not renewed within its TTL has expired: its holder died, and the slot is
 * free again without anyone cleaning up.
 *
 * Jobs over the cap wait in submission order: a job may take a slot only when the QUEUED
 * jobs submitted before it fit as well.
 */
export interface LeaseCapacityOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
  /** How long a lease lives without renewal. */
  leaseTtlSeconds?: number;
  /** Plan of a tenant with no plan recorded. */
  defaultPlan?: PlanName;
  /** Overrides of the plans' caps (configurable per deployment). */
  caps?: Partial<Record<PlanName, number>>;
  /** How long a queued job waits before asking again. */
  pollSeconds?: number;
}

interface LeaseItem {
  jobId: string;
  sessions: number;
  leaseExpiresAt: number;
}

const capPk = (tenantId: string): string => `T#${tenantId}#CAP`;
const leaseSk = (jobId: string): string => `L#${jobId}`;

export function createLeaseCapacity(options: LeaseCapacityOptions): Capacity & {
  status(tenantId: string): Promise<{ cap: number; held: number; leases: LeaseItem[] }>;
  capFor(tenantId: string): Promise<number>;
} {
  const { doc, tableName } = options;
  const clock = options.clock ?? (() => new Date());
  const ttl = options.leaseTtlSeconds ?? 900;
  const caps = { ...PLAN_CAPS, ...options.caps };
  const pollSeconds = options.pollSeconds ?? 5;
  const nowSeconds = (): number => Math.floor(clock().getTime() / 1000);

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

  async function readState(tenantId: string): Promise<{ version: number; leases: LeaseItem[] }> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const res = await doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': capPk(tenantId) },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      items.push(...(res.Items ?? []));
      startKey = res.LastEvaluatedKey;
    } while (startKey);
    const state = items.find((i) => i.sk === 'STATE') as { version?: number } | undefined;
    const now = nowSeconds();
    const leases = items
      .filter((i) => typeof i.sk === 'string' && i.sk.startsWith('L#'))
      .map((i) => i as unknown as LeaseItem)
      .filter((l) => l.leaseExpiresAt > now);
    return { version: state?.version ?? 0, leases };
  }

  /** QUEUED jobs of the tenant submitted before this one (gsi1: jobs by status, oldest first). */
  async function queuedAhead(tenantId: string, jobId: string, queuedAt: string): Promise<number> {
    const res = await doc.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TABLE_KEYS.gsi1.name,
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :sk',
        ExpressionAttributeValues: { ':pk': `T#${tenantId}#S#QUEUED`, ':sk': `${queuedAt}#${jobId}` },
        Select: 'COUNT',
      }),
    );
    return res.Count ?? 0;
  }

  function stateUpdate(tenantId: string, version: number): Record<string, unknown> {
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

  async function acquire(
    tenantId: string,
    jobId: string,
    { sessions, queuedAt }: { sessions: number; queuedAt: string },
  ): Promise<AcquireResult> {
    for (let round = 0; round < 5; round++) {
      const [{ version, leases }, cap] = await Promise.all([readState(tenantId), capFor(tenantId)]);
      if (leases.some((l) => l.jobId === jobId)) {
        await renew(tenantId, jobId);
        return { outcome: 'acquired' };
      }
      const held = leases.reduce((sum, l) => sum + l.sessions, 0);
      const ahead = await queuedAhead(tenantId, jobId, queuedAt);
      const fits = held + sessions * (ahead + 1) <= cap;
      if (!fits) return { outcome: 'queued', position: ahead + 1, retryAfterSeconds: pollSeconds };
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
                    acquiredAt: clock().toISOString(),
                    leaseExpiresAt: nowSeconds() + ttl,
                  },
                },
              },
              stateUpdate(tenantId, version) as never,
            ],
          }),
        );
        return { outcome: 'acquired' };
      } catch (err) {
        if ((err as Error).name !== 'TransactionCanceledException') throw err;
        // Another acquire or release went first: look again.
      }
    }
    return { outcome: 'queued', position: 1, retryAfterSeconds: 1 };
  }

  async function renew(tenantId: string, jobId: string): Promise<void> {
    try {
      await doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: capPk(tenantId), sk: leaseSk(jobId) },
          UpdateExpression: 'SET leaseExpiresAt = :exp',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':exp': nowSeconds() + ttl },
        }),
      );
    } catch (err) {
      if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
    }
  }

  async function release(tenantId: string, jobId: string): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const { version, leases } = await readState(tenantId);
      void leases;
      try {
        await doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Delete: { TableName: tableName, Key: { pk: capPk(tenantId), sk: leaseSk(jobId) } } },
              stateUpdate(tenantId, version) as never,
            ],
          }),
        );
        return;
      } catch (err) {
        if ((err as Error).name !== 'TransactionCanceledException') throw err;
      }
    }
  }

  async function status(tenantId: string): Promise<{ cap: number; held: number; leases: LeaseItem[] }> {
    const [{ leases }, cap] = await Promise.all([readState(tenantId), capFor(tenantId)]);
    return { cap, held: leases.reduce((s, l) => s + l.sessions, 0), leases };
  }

  return { acquire, renew, release, status, capFor };
}
