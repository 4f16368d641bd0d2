import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '../aws/sdk/client-dynamodb.ts';
import { UpdateCommand } from '../aws/sdk/lib-dynamodb.ts';
import { getIntFromEnv } from '../config.ts';

/**
 * Per-key rate limits: a token bucket of `burst` requests refilled at `ratePerSecond`,
 * kept in DynamoDB (`pk = RATE#<keyId>`, `sk = RATE`).
 *
 * Why DynamoDB and not memory: in AWS every concurrent Lambda instance would keep its own
 * bucket (the limit would scale with concurrency and reset on every cold start), and the
 * authorizer's result cache would skip a limit kept there. One item per key makes the limit
 * the same for the whole fleet and for the local server, at one write per request.
 *
 * The bucket is stored as GCRA's "theoretical arrival time" (`tat`, epoch ms), which is
 * equivalent to a token bucket but needs no read: a request is allowed when
 * `tat <= now + (burst - 1) / rate`, and then moves `tat` to `max(tat, now) + 1 / rate`.
 * `max` is not expressible in an update, so there are two conditional writes: an idle
 * bucket (`tat <= now`) restarts at `now`, a busy one advances `tat`. The conditions make
 * concurrent requests safe without locks.
 */
export interface RateLimiter {
  /** Takes one request from the key's bucket: allowed, or denied with when to retry. */
  take(keyId: string): Promise<RateDecision>;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimitOptions {
  /** Sustained requests per second per key. */
  ratePerSecond: number;
  /** Requests a key may make at once after being idle (bucket size). */
  burst: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitOptions = { ratePerSecond: 10, burst: 20 };

/**
 * Requests without a key of their own, per source address: the public routes (Anchor's
 * webhook deliveries, the OpenAPI document) and requests whose key the authorizer refused.
 * Anchor delivers from a few addresses, a few events per session; a flood of forged deliveries
 * or of guessed keys from one address gets 429 after the burst.
 */
export const DEFAULT_ANONYMOUS_RATE_LIMIT: RateLimitOptions = { ratePerSecond: 5, burst: 30 };

/** The bucket of requests from `sourceIp` that carry no valid key. */
export function anonymousBucket(sourceIp: string | undefined): string {
  return `ip:${sourceIp || 'unknown'}`;
}

function isConditionFailure(err: unknown): err is Error & { Item?: Record<string, AttributeValue> } {
  return err instanceof ConditionalCheckFailedException;
}

/** A token bucket per key in the ledger table. */
export function createDynamoRateLimiter(deps: {
  doc: DynamoDBDocumentClient;
  tableName: string;
  limits?: RateLimitOptions;
  clock?: () => Date;
}): RateLimiter {
  const { doc, tableName } = deps;
  const { ratePerSecond, burst } = deps.limits ?? DEFAULT_RATE_LIMIT;
  if (!(ratePerSecond > 0) || !Number.isInteger(burst) || burst < 1) {
    throw new RangeError('rate limit: ratePerSecond must be > 0 and burst an integer >= 1');
  }
  const clock = deps.clock ?? (() => new Date());
  const interval = 1000 / ratePerSecond;
  const tolerance = interval * (burst - 1);

  return {
    async take(keyId) {
      const now = clock().getTime();
      const key = { pk: `RATE#${keyId}`, sk: 'RATE' };
      // The item is only needed while the bucket is not full again; then DynamoDB's TTL removes it.
      const expiresAt = Math.ceil((now + tolerance + interval) / 1000) + 60;
      try {
        await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET tat = :next, expiresAt = :exp',
            ConditionExpression: 'attribute_not_exists(tat) OR tat <= :now',
            ExpressionAttributeValues: { ':next': now + interval, ':now': now, ':exp': expiresAt },
          }),
        );
        return { allowed: true };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
      try {
        await doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET tat = tat + :interval, expiresAt = :exp',
            ConditionExpression: 'tat <= :limit',
            ExpressionAttributeValues: {
              ':interval': interval,
              ':limit': now + tolerance,
              ':exp': expiresAt + 1,
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { allowed: true };
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        const tat = Number(err.Item?.tat?.N);
        const waitMs = Number.isFinite(tat) ? tat - (now + tolerance) : interval;
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
      }
    },
  };
}

/** A limiter that allows everything (tests of other behaviour, or limits enforced elsewhere). */
export const unlimited: RateLimiter = { take: async () => ({ allowed: true }) };

/** The per-address limiter from `BELAY_API_ANONYMOUS_RATE_PER_SECOND` and `BELAY_API_ANONYMOUS_BURST`. */
export function anonymousRateLimiterFromEnv(
  doc: DynamoDBDocumentClient,
  tableName: string,
  env: NodeJS.ProcessEnv = process.env,
): RateLimiter {
  return createDynamoRateLimiter({
    doc,
    tableName,
    limits: {
      ratePerSecond: getIntFromEnv(
        'BELAY_API_ANONYMOUS_RATE_PER_SECOND',
        DEFAULT_ANONYMOUS_RATE_LIMIT.ratePerSecond,
        { min: 1 },
        env,
      ),
      burst: getIntFromEnv('BELAY_API_ANONYMOUS_BURST', DEFAULT_ANONYMOUS_RATE_LIMIT.burst, { min: 1 }, env),
    },
  });
}
