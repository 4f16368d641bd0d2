import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '../aws/sdk/client-dynamodb.ts';
import { GetCommand, PutCommand, TransactWriteCommand } from '../aws/sdk/lib-dynamodb.ts';
import { queryPrefix } from '../dynamo/query.ts';
import { TENANT_DIRECTORY_PK } from '../ledger/schema.ts';
import { ApiKeyNotFoundError, InvalidRoleError, InvalidTenantError } from './errors.ts';

/**
 * API keys: `blk_<12 hex>_<43 base64url>`. The first 16 characters (`blk_<12 hex>`) are the
 * key id, safe to show and log; the rest is the secret. Only a sha256 of the whole key is
 * stored, in the ledger table:
 *
 * | item           | pk                 | sk               | fields                                         |
 * |----------------|--------------------|------------------|------------------------------------------------|
 * | key (lookup)   | `APIKEY#<sha256>`  | `APIKEY`         | tenantId, roles, keyId, createdAt, revokedAt?  |
 * | key (listing)  | `T#<tenant>`       | `APIKEY#<keyId>` | keyHash, roles, label?, createdAt, revokedAt?  |
 * | tenant         | `T#<tenant>`       | `TENANT`         | tenantId, plan, createdAt; gsi1 `TENANTS`      |
 *
 * A key is 256 bits of randomness, so a fast hash is the right tool (no password stretching
 * needed) and the lookup by hash leaks nothing about the secret through timing.
 */

export const ROLES = ['submitter', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling: the tenant and roles of the API key, and its id (never the key). */
export interface Principal {
  tenantId: string;
  roles: Role[];
  keyId: string;
}

export interface ApiKeyRecord {
  keyId: string;
  tenantId: string;
  roles: Role[];
  label?: string;
  createdAt: string;
  revokedAt?: string;
}

/** A freshly created key: `apiKey` is shown once and never stored. */
export interface CreatedApiKey extends ApiKeyRecord {
  apiKey: string;
}

export interface ApiKeyStore {
  /** Creates a key for the tenant (and the tenant item, with `plan`, if the tenant is new). */
  create(
    tenantId: string,
    roles: readonly Role[],
    options?: { label?: string; plan?: string },
  ): Promise<CreatedApiKey>;
  /** The key's principal, or `null` for a malformed, unknown or revoked key. */
  verify(apiKey: string): Promise<Principal | null>;
  /** Revokes the tenant's key; effective for the next request. Throws `ApiKeyNotFoundError`. */
  revoke(tenantId: string, keyId: string): Promise<void>;
  /** The tenant's keys (ids and roles; never secrets). */
  list(tenantId: string): Promise<ApiKeyRecord[]>;
}

const KEY_PATTERN = /^(blk_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** sha256 (hex) of a raw key: what the table stores. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** Parses `submitter,approver` into roles; unknown names throw `InvalidRoleError`. */
export function parseRoles(value: string | readonly string[]): Role[] {
  const names = (typeof value === 'string' ? value.split(',') : [...value])
    .map((r) => r.trim())
    .filter(Boolean);
  if (names.length === 0) throw new InvalidRoleError('');
  for (const name of names)
    if (!(ROLES as readonly string[]).includes(name)) throw new InvalidRoleError(name);
  return [...new Set(names as Role[])];
}

/** Does the principal hold `role`? `admin` holds every role. */
export function hasRole(principal: Pick<Principal, 'roles'>, role: Role): boolean {
  return principal.roles.includes(role) || principal.roles.includes('admin');
}

function lookupKey(hash: string): { pk: string; sk: string } {
  return { pk: `APIKEY#${hash}`, sk: 'APIKEY' };
}

function listingKey(tenantId: string, keyId: string): { pk: string; sk: string } {
  return { pk: `T#${tenantId}`, sk: `APIKEY#${keyId}` };
}

function toRecord(item: Record<string, unknown>): ApiKeyRecord {
  const record: ApiKeyRecord = {
    keyId: String(item.keyId),
    tenantId: String(item.tenantId),
    roles: (Array.isArray(item.roles) ? item.roles : []) as Role[],
    createdAt: String(item.createdAt),
  };
  if (typeof item.label === 'string') record.label = item.label;
  if (typeof item.revokedAt === 'string') record.revokedAt = item.revokedAt;
  return record;
}

/**
 * API keys in the ledger table.
 *
 * @example
 * const keys = createApiKeyStore({ doc, tableName: 'belay-ledger' });
 * const { apiKey } = await keys.create('acme', ['submitter', 'approver']);
 * await keys.verify(apiKey); // { tenantId: 'acme', roles: [...], keyId: 'blk_…' }
 */
export function createApiKeyStore(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
}): ApiKeyStore {
  const { doc, tableName } = deps;
  const clock = deps.clock ?? (() => new Date());

  return {
    async create(tenantId, roles, options = {}) {
      if (!TENANT_PATTERN.test(tenantId)) throw new InvalidTenantError(tenantId);
      const checkedRoles = parseRoles(roles);
      const keyId = `blk_${randomBytes(6).toString('hex')}`;
      const apiKey = `${keyId}_${randomBytes(32).toString('base64url')}`;
      const keyHash = hashApiKey(apiKey);
      const createdAt = clock().toISOString();
      const label = options.label ? { label: options.label } : {};
      await doc
        .send(
          new PutCommand({
            TableName: tableName,
            Item: {
              pk: `T#${tenantId}`,
              sk: 'TENANT',
              tenantId,
              plan: options.plan ?? 'free',
              createdAt,
              // Listed in the tenant directory (gsi1 `TENANTS`), which the watchdog reads.
              gsi1pk: TENANT_DIRECTORY_PK,
              gsi1sk: tenantId,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        )
        .catch((err: unknown) => {
          if (!(err instanceof ConditionalCheckFailedException)) throw err;
        });
      await doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: { ...lookupKey(keyHash), tenantId, roles: checkedRoles, keyId, createdAt, ...label },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: {
                  ...listingKey(tenantId, keyId),
                  tenantId,
                  keyId,
                  keyHash,
                  roles: checkedRoles,
                  createdAt,
                  ...label,
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return { apiKey, keyId, tenantId, roles: checkedRoles, createdAt, ...label };
    },

    async verify(apiKey) {
      if (typeof apiKey !== 'string') return null;
      const match = KEY_PATTERN.exec(apiKey);
      if (!match) return null;
      const hash = hashApiKey(apiKey);
      const res = await doc.send(
        new GetCommand({ TableName: tableName, Key: lookupKey(hash), ConsistentRead: true }),
      );
      const item = res.Item;
      if (!item || typeof item.pk !== 'string') return null;
      // The lookup already matched the hash; compare again in constant time so no code path
      // ever decides on a key by a short-circuiting string comparison.
      const stored = Buffer.from(item.pk.slice('APIKEY#'.length), 'hex');
      const given = Buffer.from(hash, 'hex');
      if (stored.length !== given.length || !timingSafeEqual(stored, given)) return null;
      if (item.revokedAt !== undefined || item.keyId !== match[1]) return null;
      const roles = (Array.isArray(item.roles) ? item.roles : []).filter((r): r is Role =>
        (ROLES as readonly string[]).includes(String(r)),
      );
      return { tenantId: String(item.tenantId), roles, keyId: String(item.keyId) };
    },

    async revoke(tenantId, keyId) {
      const res = await doc.send(
        new GetCommand({ TableName: tableName, Key: listingKey(tenantId, keyId), ConsistentRead: true }),
      );
      const keyHash = res.Item?.keyHash;
      if (typeof keyHash !== 'string') throw new ApiKeyNotFoundError(keyId);
      const now = clock().toISOString();
      const update = (key: { pk: string; sk: string }) => ({
        Update: {
          TableName: tableName,
          Key: key,
          UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':now': now },
        },
      });
      await doc.send(
        new TransactWriteCommand({
          TransactItems: [update(lookupKey(keyHash)), update(listingKey(tenantId, keyId))],
        }),
      );
    },

    async list(tenantId) {
      return (await queryPrefix(doc, tableName, `T#${tenantId}`, 'APIKEY#')).map(toRecord);
    },
  };
}
