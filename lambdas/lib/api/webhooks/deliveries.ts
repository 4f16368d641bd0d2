import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, PutCommand } from '../../aws/sdk/lib-dynamodb.ts';
import { conditionHeld } from '../../dynamo/conditional.ts';

/**
 * Webhook deliveries already handled, in the ledger table, so a replay changes nothing:
 *
 * | item            | pk                           | sk        | fields                      |
 * |-----------------|------------------------------|-----------|-----------------------------|
 * | received event  | `WEBHOOK#<source>#<eventId>` | `WEBHOOK` | receivedAt, type, expiresAt |
 *
 * It expires through the table's TTL (`expiresAt`, epoch seconds).
 */

const DAY_SECONDS = 24 * 60 * 60;

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
  return conditionHeld(
    doc.send(
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
    ),
  );
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
