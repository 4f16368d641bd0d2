/**
 * A job id submitted again after its job's TTL expired is a new job everywhere: its execution
 * is not refused for a name Step Functions still holds (90 days), and its write is sent under a
 * key of its own, so a site that honours idempotency keys places a second order instead of
 * answering with the first one.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { jobKey } from '../../../lambdas/lib/ledger/keys.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { TENANT } from '../../support/fixtures.ts';
import { executionsOf, runToSuccess, submitCheckout } from '../../support/jobs.ts';
import { keyOf, ofType } from '../../support/records.ts';

const engine = useEngineStack();

describe('Engine: a job id reused after its TTL', () => {
  it('runs the new job in an execution of its own and places its own order', {
    timeout: 360_000,
  }, async () => {
    const e = engine();
    const jobId = 'reused-id';
    const first = await submitCheckout(e, { jobId });
    await runToSuccess(e, jobId, { timeoutMs: 150_000 });
    const firstKey = await keyOf(e, jobId, 'place-order');

    // Its TTL passes (DynamoDB Local never deletes: the ledger treats an expired job as gone).
    await e.stack.doc.send(
      new UpdateCommand({
        TableName: e.stack.tableName,
        Key: jobKey(TENANT, jobId),
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const again = await submitCheckout(e, { jobId });
    expect(again.createdAt).not.toBe(first.createdAt);
    expect(again.status).toBe('QUEUED');

    const view = await runToSuccess(e, jobId, { timeoutMs: 150_000 });
    expect(view.job.status).toBe('SUCCEEDED');
    const secondKey = await keyOf(e, jobId, 'place-order');
    expect(secondKey).not.toBe(firstKey);
    expect(ofType(view.entries, 'step-started').map((i) => i.idempotencyKey)).toEqual([secondKey]);
    const writes = await e.shop.writes();
    expect(writes.countsByKey[firstKey]).toBe(1);
    expect(writes.countsByKey[secondKey]).toBe(1);
    // Two executions of the id, one per job, both succeeded.
    expect(executionsOf(e, jobId).map((x) => x.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  });
});
