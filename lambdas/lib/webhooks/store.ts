import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Webhook bookkeeping in the ledger table:
 *
 * | item            | pk                          | sk        | fields                          |
 * |-----------------|-----------------------------|-----------|---------------------------------|
 * | session owner   | `SESSION#<sessionId>`       | `SESSION` | tenantId, jobId, app?, expiresAt |
 * | received event  | `WEBHOOK#<source>#<eventId>`| `WEBHOOK` | receivedAt, type, expiresAt     |
 *
 * Both expire through the table's TTL (`expiresAt`, epoch seconds).
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

function eventKey(source: string, eventId: string): { pk: string; sk: string } {
  return { pk: `WEBHOOK#${source}#${eventId}`, sk: 'WEBHOOK' };
}

/**
 * Records a delivered event id with a conditional put: `true` the first time, `false` for a
 * replay. Kept for `ttlSeconds` (longer than the freshness window, after which a replay is
 * refused for its timestamp anyway).
 */
export async function rememberEvent(
  doc: DynamoDBDocumentClient,
  tableName: string,
  source: string,
  eventId: string,
  options: { type?: string; now?: Date; ttlSeconds?: number } = {},
): Promise<boolean> {
  const now = options.now ?? new Date();
  try {
    await doc.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...eventKey(source, eventId),
          receivedAt: now.toISOString(),
          ...(options.type ? { type: options.type } : {}),
          expiresAt: Math.floor(now.getTime() / 1000) + (options.ttlSeconds ?? DAY_SECONDS),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/** Forgets an event whose handling failed, so the sender's retry is processed. */
export async function forgetEvent(
  doc: DynamoDBDocumentClient,
  tableName: string,
  source: string,
  eventId: string,
): Promise<void> {
  await doc.send(new DeleteCommand({ TableName: tableName, Key: eventKey(source, eventId) }));
}
