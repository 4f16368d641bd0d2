import { randomBytes } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '../../aws/sdk/lib-dynamodb.ts';
import { conditionHeld } from '../../dynamo/conditional.ts';
import type { ActionCacheKey } from '../../playbooks/contract.ts';
import { sha16 } from './key.ts';

/**
 * The action cache, in the ledger table (one item per key):
 *
 * | item         | pk                                  | sk             | fields                                       |
 * |--------------|-------------------------------------|----------------|----------------------------------------------|
 * | cache entry  | `T#<tenant>#AC#<playbook>@<version>` | `K#<key hash>` | key parts, actions, status, entryId, counts   |
 * | shared entry | `AC#SHARED#<playbook>@<version>`     | `K#<key hash>` | the same, with no tenant in it                |
 *
 * The tenant leads the partition key, as for every tenant's item of the table, so an entry is
 * found only with its tenant's id. A playbook with `actionCache: 'shared'` also keeps entries
 * that hold only its own text in a partition of its own, for every tenant (`step-cache.ts`). An entry is `verified` when written (only after its step
 * verified) and `demoted` when an attempt run from it failed: a demoted entry is never
 * served, and the next verified run replaces it. Entries expire through the table's TTL.
 */

/** Whose cache: the tenant and the playbook's `name@version`; `shared`, the playbook's entries for every tenant. */
export interface CacheScope {
  tenantId: string;
  playbookId: string;
  shared?: boolean;
}

/** An entry as stored. `actions` hold placeholders only (see `placeholders.ts`). */
export interface CacheEntry {
  entryId: string;
  status: 'verified' | 'demoted';
  key: ActionCacheKey;
  actions: Record<string, unknown>[];
  goalTemplate: string;
  /** The job whose verified step the action list came from (an id, no data). */
  jobId: string;
  createdAt: string;
  /** Attempts served from it that verified. */
  hits: number;
  /** The entry this one replaced after a heal (it healed that entry's list), if any. */
  healedFrom?: string;
  demotedReason?: string;
}

export interface ActionCacheStore {
  /** The verified entry under the key, if there is one (a demoted entry is not returned). */
  get(scope: CacheScope, key: ActionCacheKey): Promise<CacheEntry | undefined>;
  /**
   * Writes a verified action list. With `replaces` (a healed entry), only while that entry is
   * still the one stored; returns false when another job's write came first (then it stands).
   */
  put(
    scope: CacheScope,
    entry: Omit<CacheEntry, 'entryId' | 'status' | 'createdAt' | 'hits' | 'healedFrom'>,
    replaces?: { entryId: string },
  ): Promise<boolean>;
  /** An attempt served from the entry verified. */
  hit(scope: CacheScope, key: ActionCacheKey, entryId: string): Promise<void>;
  /** An attempt served from the entry failed: it is not served again (unless a verified run replaces it). */
  demote(scope: CacheScope, key: ActionCacheKey, entryId: string, reason: string): Promise<void>;
}

/** Entries unused for this long expire (each write and each hit moves it). */
export const CACHE_TTL_SECONDS = 30 * 24 * 60 * 60;

export function cachePk(scope: CacheScope): string {
  return scope.shared ? `AC#SHARED#${scope.playbookId}` : `T#${scope.tenantId}#AC#${scope.playbookId}`;
}

export function cacheSk(key: ActionCacheKey): string {
  return `K#${sha16(JSON.stringify([key.step, key.app, key.goal, key.path, key.fingerprint]))}`;
}

const newEntryId = (): string => `ac_${randomBytes(9).toString('base64url')}`;

/** The cache in DynamoDB (the ledger table). */
export function createActionCacheStore(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
}): ActionCacheStore {
  const { doc, tableName } = deps;
  const clock = deps.clock ?? (() => new Date());
  const ttl = (): number => Math.floor(clock().getTime() / 1000) + CACHE_TTL_SECONDS;
  const keyOf = (scope: CacheScope, key: ActionCacheKey) => ({ pk: cachePk(scope), sk: cacheSk(key) });
  return {
    async get(scope, key) {
      const out = await doc.send(
        new GetCommand({ TableName: tableName, Key: keyOf(scope, key), ConsistentRead: true }),
      );
      const item = out.Item as (CacheEntry & { pk: string }) | undefined;
      if (item?.status !== 'verified') return undefined;
      return {
        entryId: item.entryId,
        status: item.status,
        key: item.key,
        actions: item.actions,
        goalTemplate: item.goalTemplate,
        jobId: item.jobId,
        createdAt: item.createdAt,
        hits: item.hits ?? 0,
        ...(item.healedFrom ? { healedFrom: item.healedFrom } : {}),
      };
    },
    async put(scope, entry, replaces) {
      const item: CacheEntry & Record<string, unknown> = {
        ...keyOf(scope, entry.key),
        ...(scope.shared ? {} : { tenantId: scope.tenantId }),
        playbookId: scope.playbookId,
        ...entry,
        entryId: newEntryId(),
        status: 'verified',
        createdAt: clock().toISOString(),
        hits: 0,
        ...(replaces ? { healedFrom: replaces.entryId } : {}),
        expiresAt: ttl(),
      };
      return conditionHeld(
        doc.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ...(replaces
              ? { ConditionExpression: 'entryId = :e', ExpressionAttributeValues: { ':e': replaces.entryId } }
              : {}),
          }),
        ),
      );
    },
    async hit(scope, key, entryId) {
      await conditionHeld(
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keyOf(scope, key),
            UpdateExpression: 'ADD hits :one SET expiresAt = :x',
            ConditionExpression: 'entryId = :e AND #s = :v',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':one': 1, ':x': ttl(), ':e': entryId, ':v': 'verified' },
          }),
        ),
      );
    },
    async demote(scope, key, entryId, reason) {
      await conditionHeld(
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keyOf(scope, key),
            UpdateExpression: 'SET #s = :d, demotedReason = :r, demotedAt = :t',
            ConditionExpression: 'entryId = :e',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':d': 'demoted',
              ':r': reason.slice(0, 300),
              ':t': clock().toISOString(),
              ':e': entryId,
            },
          }),
        ),
      );
    },
  };
}

/** The cache in this process's memory (unit tests, a deployment that turns the cache off keeps nothing). */
export function memoryActionCacheStore(): ActionCacheStore & {
  items: Map<string, CacheEntry & { scope: CacheScope }>;
} {
  const items = new Map<string, CacheEntry & { scope: CacheScope }>();
  const id = (scope: CacheScope, key: ActionCacheKey): string => `${cachePk(scope)}|${cacheSk(key)}`;
  return {
    items,
    async get(scope, key) {
      const item = items.get(id(scope, key));
      return item?.status === 'verified' ? structuredClone(item) : undefined;
    },
    async put(scope, entry, replaces) {
      const current = items.get(id(scope, key(entry)));
      if (replaces && current?.entryId !== replaces.entryId) return false;
      items.set(id(scope, key(entry)), {
        ...structuredClone(entry),
        scope,
        entryId: newEntryId(),
        status: 'verified',
        createdAt: new Date().toISOString(),
        hits: 0,
        ...(replaces ? { healedFrom: replaces.entryId } : {}),
      });
      return true;
    },
    async hit(scope, k, entryId) {
      const item = items.get(id(scope, k));
      if (item?.entryId === entryId) item.hits++;
    },
    async demote(scope, k, entryId, reason) {
      const item = items.get(id(scope, k));
      if (item?.entryId === entryId) Object.assign(item, { status: 'demoted', demotedReason: reason });
    },
  };
}

const key = (entry: { key: ActionCacheKey }): ActionCacheKey => entry.key;

/** A cache that keeps nothing (`BELAY_ACTION_CACHE=off`). */
export const NO_ACTION_CACHE: ActionCacheStore = Object.freeze({
  get: async () => undefined,
  put: async () => false,
  hit: async () => undefined,
  demote: async () => undefined,
});
