import { createHash, randomBytes } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand } from '../aws/sdk/lib-dynamodb.ts';
import type { ConnectionRefusal } from './errors.ts';

/**
 * Pending account connections: an admin asked to connect an account through Anchor's hosted
 * sign-in, and Belay waits for the person's browser to come back to the callback. The callback
 * carries a key only Belay and that browser know (in its path); the item is stored under the
 * key's SHA-256, so reading the table gives no callback away. The item holds the tenant, so a
 * callback can only ever complete the connection of the tenant that started it.
 *
 * | item       | pk                          | sk        | attributes |
 * | ---------- | --------------------------- | --------- | ---------- |
 * | connection | `CONNECT#<sha256 callback>` | `CONNECT` | tenantId, connectionId, application, label, anchorApplicationId, tokenHash, tokenExpiresAt, status, accountId?, identityId?, completedAt?, expiresAt (TTL) |
 */
export interface PendingConnection {
  connectionId: string;
  tenantId: string;
  application: string;
  label: string;
  anchorApplicationId: string;
  /** Anchor's hash of the identity token (the token itself is never stored). */
  tokenHash: string;
  /** When Anchor stops accepting the token: a callback after it is late. */
  tokenExpiresAt: string;
  createdAt: string;
  status: 'pending' | 'completed';
  accountId?: string;
  identityId?: string;
  completedAt?: string;
}

/** A new callback key: 256 random bits, the callback's only credential (it goes in the callback URL). */
export function newCallbackKey(): string {
  return randomBytes(32).toString('base64url');
}

/** Callback keys are base64url of 32 bytes; anything else is refused before any read. */
export const CALLBACK_KEY = /^[A-Za-z0-9_-]{43}$/;

/** Kept a day past the token's expiry, so a late callback is told it is late, not unknown. */
const KEEP_AFTER_EXPIRY_SECONDS = 24 * 3600;

const keyOf = (callbackKey: string): { pk: string; sk: string } => ({
  pk: `CONNECT#${createHash('sha256').update(callbackKey).digest('hex')}`,
  sk: 'CONNECT',
});

/**
 * Why a callback cannot complete `connection` at `now`, or `undefined` when it can. Pure: the
 * callback asks it first, and again (from a fresh read) when its conditional write loses.
 */
export function callbackRefusal(
  connection: PendingConnection | null,
  now: Date,
): ConnectionRefusal | undefined {
  if (!connection) return 'connection-unknown';
  if (connection.status !== 'pending') return 'connection-used';
  if (Date.parse(connection.tokenExpiresAt) <= now.getTime()) return 'connection-expired';
  return undefined;
}

/** A DynamoDB transaction item, as `@aws-sdk/lib-dynamodb`'s TransactWriteCommand takes it. */
export type TransactItem = Record<string, unknown>;

export interface ConnectionStore {
  /** Records a new pending connection under its callback key (from {@link newCallbackKey}). */
  create(
    callbackKey: string,
    input: Omit<PendingConnection, 'connectionId' | 'createdAt' | 'status'>,
  ): Promise<PendingConnection>;
  /** The connection of a callback key, or null. */
  get(callbackKey: string): Promise<PendingConnection | null>;
  /**
   * The write that completes the connection, for the transaction that also creates its account:
   * it holds only while the connection is pending and its token unexpired, so of two callbacks
   * at most one completes it.
   */
  completion(callbackKey: string, done: { accountId: string; identityId: string; at: Date }): TransactItem;
}

/** Connections in the ledger table. */
export function createConnectionStore(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
}): ConnectionStore {
  const { doc, tableName } = deps;
  const clock = deps.clock ?? ((): Date => new Date());
  return {
    async create(callbackKey, input) {
      const connection: PendingConnection = {
        ...input,
        connectionId: `conn_${randomBytes(8).toString('hex')}`,
        createdAt: clock().toISOString(),
        status: 'pending',
      };
      await doc.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...keyOf(callbackKey),
            ...connection,
            expiresAt: Math.floor(Date.parse(input.tokenExpiresAt) / 1000) + KEEP_AFTER_EXPIRY_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return connection;
    },

    async get(callbackKey) {
      const res = await doc.send(
        new GetCommand({ TableName: tableName, Key: keyOf(callbackKey), ConsistentRead: true }),
      );
      if (!res.Item) return null;
      const { pk: _pk, sk: _sk, expiresAt: _ttl, ...rest } = res.Item;
      return rest as PendingConnection;
    },

    completion(callbackKey, done) {
      return {
        Update: {
          TableName: tableName,
          Key: keyOf(callbackKey),
          UpdateExpression:
            'SET #status = :completed, accountId = :account, identityId = :identity, completedAt = :at',
          ConditionExpression: '#status = :pending AND tokenExpiresAt > :at',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':completed': 'completed',
            ':pending': 'pending',
            ':account': done.accountId,
            ':identity': done.identityId,
            ':at': done.at.toISOString(),
          },
        },
      };
    },
  };
}
