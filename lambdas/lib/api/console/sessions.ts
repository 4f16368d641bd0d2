import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type ApiKeyStore, hashApiKey, type Principal, type Role } from '../../auth/api-keys.ts';
import { DeleteCommand, GetCommand, PutCommand } from '../../aws/sdk/lib-dynamodb.ts';

/**
 * Console sessions: a person signs in once with an API key and gets a random session token
 * in an httpOnly, SameSite=Strict cookie (Secure over https); the key itself is used for that
 * one request and never kept by the browser. Only a sha256 of the token is stored, with the
 * key's tenant, roles and id, a CSRF token and an expiry (TTL):
 *
 * | item    | pk                      | sk         | fields                                                  |
 * |---------|-------------------------|------------|---------------------------------------------------------|
 * | session | `CONSOLE#<sha256 token>` | `SESSION`  | tenantId, roles, keyId, keyHash, csrf, expiresAt (TTL)  |
 *
 * Every request re-checks the API key it came from, so revoking the key ends its sessions at once.
 */

export interface ConsoleSession {
  principal: Principal;
  /** Sent back by the console's script on every change it asks for (`X-Belay-CSRF`). */
  csrf: string;
  expiresAt: string;
}

export interface ConsoleSessionStore {
  /** A new session for a valid key: the token (for the cookie) and the session; `null` for a bad key. */
  create(apiKey: string): Promise<{ token: string; session: ConsoleSession } | null>;
  /** The live session of a token, or `null` (unknown, expired, or its key revoked). */
  verify(token: string | undefined): Promise<ConsoleSession | null>;
  /** Ends the session (sign-out). */
  end(token: string): Promise<void>;
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function sessionKey(token: string): { pk: string; sk: string } {
  return { pk: `CONSOLE#${createHash('sha256').update(token, 'utf8').digest('hex')}`, sk: 'SESSION' };
}

/**
 * Sessions in the ledger table.
 *
 * @example
 * const sessions = createConsoleSessionStore({ doc, tableName, keys, ttlMinutes: 120 });
 * const created = await sessions.create(apiKey); // null when the key is not valid
 */
export function createConsoleSessionStore(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  keys: ApiKeyStore;
  ttlMinutes: number;
  clock?: () => Date;
}): ConsoleSessionStore {
  const { doc, tableName, keys } = deps;
  const clock = deps.clock ?? (() => new Date());
  return {
    async create(apiKey) {
      const principal = await keys.verify(apiKey);
      if (!principal) return null;
      const token = randomBytes(32).toString('base64url');
      const csrf = randomBytes(24).toString('base64url');
      const expires = new Date(clock().getTime() + deps.ttlMinutes * 60_000);
      await doc.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...sessionKey(token),
            tenantId: principal.tenantId,
            roles: principal.roles,
            keyId: principal.keyId,
            keyHash: hashApiKey(apiKey),
            csrf,
            expiresAt: Math.floor(expires.getTime() / 1000),
            createdAt: clock().toISOString(),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return { token, session: { principal, csrf, expiresAt: expires.toISOString() } };
    },

    async verify(token) {
      if (token === undefined || !TOKEN.test(token)) return null;
      const res = await doc.send(
        new GetCommand({ TableName: tableName, Key: sessionKey(token), ConsistentRead: true }),
      );
      const item = res.Item;
      // DynamoDB's TTL deletes late: an expired item is treated as gone.
      if (!item || typeof item.expiresAt !== 'number' || item.expiresAt * 1000 <= clock().getTime())
        return null;
      const key = await doc.send(
        new GetCommand({
          TableName: tableName,
          Key: { pk: `APIKEY#${String(item.keyHash)}`, sk: 'APIKEY' },
          ConsistentRead: true,
        }),
      );
      if (!key.Item || key.Item.revokedAt !== undefined || key.Item.keyId !== item.keyId) return null;
      return {
        principal: {
          tenantId: String(item.tenantId),
          keyId: String(item.keyId),
          roles: (Array.isArray(key.Item.roles) ? key.Item.roles : []) as Role[],
        },
        csrf: String(item.csrf),
        expiresAt: new Date(item.expiresAt * 1000).toISOString(),
      };
    },

    async end(token) {
      if (!TOKEN.test(token)) return;
      await doc.send(new DeleteCommand({ TableName: tableName, Key: sessionKey(token) }));
    },
  };
}

/** Constant-time comparison of a CSRF token with the session's. */
export function sameCsrf(session: ConsoleSession, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(session.csrf, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
