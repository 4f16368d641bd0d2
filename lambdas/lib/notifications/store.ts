import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '../aws/sdk/client-dynamodb.ts';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '../aws/sdk/lib-dynamodb.ts';
import { queryPrefix } from '../dynamo/query.ts';
import { WebhookNotFoundError, WebhookUrlError } from './errors.ts';

/**
 * A tenant's outgoing webhooks and their delivery log, in the ledger table:
 *
 * | item     | pk          | sk                                          | fields                                         |
 * |----------|-------------|---------------------------------------------|------------------------------------------------|
 * | webhook  | `T#<tenant>` | `NOTIFYHOOK#<webhookId>`                   | url, description?, events, createdAt, revokedAt? |
 * | delivery | `T#<tenant>` | `NOTIFYLOG#<webhookId>#<time>#<deliveryId>` | event, jobId, step, outcome, attempts, expiresAt (TTL) |
 *
 * No secret is stored: a webhook's signing secret is derived (`signing.ts`).
 */

/** The events a webhook is sent. */
export const WEBHOOK_EVENTS = ['job.waiting', 'playbook.check.failed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface Webhook {
  webhookId: string;
  tenantId: string;
  url: string;
  description?: string;
  /**
   * Event types it receives: `job.waiting`, and `playbook.check.failed` (a drift check turned
   * red; webhooks registered before checks existed receive waits only).
   */
  events: string[];
  createdAt: string;
  revokedAt?: string;
}

export interface DeliveryAttempt {
  at: string;
  /** HTTP status, or 0 when no answer came (refused, timed out). */
  status: number;
  ms: number;
  error?: string;
}

export interface Delivery {
  deliveryId: string;
  webhookId: string;
  event: string;
  jobId: string;
  step: string;
  outcome: 'delivered' | 'failed';
  attempts: DeliveryAttempt[];
  at: string;
}

/** Delivery log entries are kept this long (TTL). */
const LOG_DAYS = 30;

/**
 * Checks a webhook URL: https, or http to the loopback address when `allowLoopback` (the local
 * stack); never a literal private, link-local or loopback address otherwise (the notifier must not
 * be a way into the deployment's own network).
 */
export function checkWebhookUrl(raw: string, allowLoopback: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('url must be an absolute URL, e.g. https://hooks.example.com/belay');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '127.0.0.1' || host === '::1';
  if (url.username || url.password) throw new WebhookUrlError('url must not carry a user name or password');
  if (loopback) {
    if (!allowLoopback) throw new WebhookUrlError('url must not point at this machine');
    return url.toString();
  }
  if (url.protocol !== 'https:') throw new WebhookUrlError('url must use https');
  if (
    isIP(host) &&
    /^(10\.|127\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.|0\.|fc|fd|fe80)/i.test(host)
  ) {
    throw new WebhookUrlError('url must not be a private or link-local address');
  }
  return url.toString();
}

export interface WebhookStore {
  create(tenantId: string, input: { url: string; description?: string }): Promise<Webhook>;
  list(tenantId: string): Promise<Webhook[]>;
  get(tenantId: string, webhookId: string): Promise<Webhook>;
  revoke(tenantId: string, webhookId: string): Promise<Webhook>;
  recordDelivery(tenantId: string, delivery: Delivery): Promise<void>;
  deliveries(tenantId: string, webhookId: string, limit: number): Promise<Delivery[]>;
}

const hookKey = (tenantId: string, webhookId: string) => ({
  pk: `T#${tenantId}`,
  sk: `NOTIFYHOOK#${webhookId}`,
});

function toWebhook(item: Record<string, unknown>): Webhook {
  const { pk: _p, sk: _s, ...rest } = item;
  return rest as unknown as Webhook;
}

export function createWebhookStore(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  clock?: () => Date;
}): WebhookStore {
  const { doc, tableName } = deps;
  const clock = deps.clock ?? (() => new Date());
  return {
    async create(tenantId, input) {
      const webhook: Webhook = {
        webhookId: `wh_${randomBytes(8).toString('hex')}`,
        tenantId,
        url: input.url,
        ...(input.description ? { description: input.description } : {}),
        events: [...WEBHOOK_EVENTS],
        createdAt: clock().toISOString(),
      };
      await doc.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...hookKey(tenantId, webhook.webhookId), ...webhook },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return webhook;
    },
    async list(tenantId) {
      return (await queryPrefix(doc, tableName, `T#${tenantId}`, 'NOTIFYHOOK#')).map(toWebhook);
    },
    async get(tenantId, webhookId) {
      const res = await doc.send(
        new GetCommand({ TableName: tableName, Key: hookKey(tenantId, webhookId), ConsistentRead: true }),
      );
      if (!res.Item) throw new WebhookNotFoundError(webhookId);
      return toWebhook(res.Item);
    },
    async revoke(tenantId, webhookId) {
      try {
        const res = await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: hookKey(tenantId, webhookId),
            UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':now': clock().toISOString() },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return toWebhook(res.Attributes ?? {});
      } catch (err) {
        if (err instanceof ConditionalCheckFailedException) throw new WebhookNotFoundError(webhookId);
        throw err;
      }
    },
    async recordDelivery(tenantId, delivery) {
      await doc.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: `T#${tenantId}`,
            sk: `NOTIFYLOG#${delivery.webhookId}#${delivery.at}#${delivery.deliveryId}`,
            ...delivery,
            expiresAt: Math.floor(clock().getTime() / 1000) + LOG_DAYS * 86_400,
          },
        }),
      );
    },
    async deliveries(tenantId, webhookId, limit) {
      const res = await doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':prefix': `NOTIFYLOG#${webhookId}#` },
          ScanIndexForward: false,
          Limit: limit,
        }),
      );
      return (res.Items ?? []).map((item) => {
        const { pk: _p, sk: _s, expiresAt: _e, ...rest } = item;
        return rest as unknown as Delivery;
      });
    },
  };
}
