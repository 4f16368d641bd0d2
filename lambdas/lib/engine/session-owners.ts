import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand } from '../aws/sdk/lib-dynamodb.ts';

/**
 * Which job holds a browser session, in the ledger table, so that the provider's session
 * events (which know only the session id) find their job:
 *
 * | item            | pk                    | sk        | fields                           |
 * |-----------------|-----------------------|-----------|----------------------------------|
 * | session owner   | `SESSION#<sessionId>` | `SESSION` | tenantId, jobId, app?, expiresAt |
 *
 * It expires through the table's TTL (`expiresAt`, epoch seconds).
 */

export interface SessionOwner {
  tenantId: string;
  jobId: string;
  app?: string;
}

const DAY_SECONDS = 24 * 60 * 60;

function sessionKey(sessionId: string): { pk: string; sk: string } {
  return { pk: `SESSION#${sessionId}`, sk: 'SESSION' };
}

/**
 * Remembers which job holds a browser session, so a session event from Anchor (which knows
 * only the session id) finds its job. Called by OpenSession whenever a job opens a session;
 * overwriting is fine (a session belongs to one job for its whole life).
 *
 * @example
 * await recordSessionOwner(doc, tableName, opened.sessionId, job.tenantId, job.jobId, { app: 'shop' });
 */
export async function recordSessionOwner(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sessionId: string,
  tenantId: string,
  jobId: string,
  options: { app?: string; ttlSeconds?: number; now?: Date } = {},
): Promise<void> {
  const now = options.now ?? new Date();
  await doc.send(
    new PutCommand({
      TableName: tableName,
      Item: {
        ...sessionKey(sessionId),
        sessionId,
        tenantId,
        jobId,
        ...(options.app ? { app: options.app } : {}),
        createdAt: now.toISOString(),
        expiresAt: Math.floor(now.getTime() / 1000) + (options.ttlSeconds ?? 7 * DAY_SECONDS),
      },
    }),
  );
}

/** The job that holds `sessionId`, or `null` when none was recorded. */
export async function findSessionOwner(
  doc: DynamoDBDocumentClient,
  tableName: string,
  sessionId: string,
): Promise<SessionOwner | null> {
  const res = await doc.send(
    new GetCommand({ TableName: tableName, Key: sessionKey(sessionId), ConsistentRead: true }),
  );
  const item = res.Item;
  if (!item || typeof item.tenantId !== 'string' || typeof item.jobId !== 'string') return null;
  return {
    tenantId: item.tenantId,
    jobId: item.jobId,
    ...(typeof item.app === 'string' ? { app: item.app } : {}),
  };
}
