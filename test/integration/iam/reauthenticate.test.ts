/**
 * Reauthenticate, held to its own IAM policy from the template (as in AWS), signs the job's
 * account in again and writes its `reauth` entry. Appending an entry with a cost updates the
 * job item's totals in the same transaction, an UpdateItem: without it in the grant every
 * re-sign-in path failed the job with AccessDenied in AWS.
 */
import { describe, expect, it } from 'vitest';
import { localFunctionArn } from '../../../local/stack.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { TENANT } from '../../support/fixtures.ts';
import { submitCheckout, waitForJob, waitingAt } from '../../support/jobs.ts';
import { ofType } from '../../support/records.ts';

const engine = useEngineStack();

describe('Function: Reauthenticate under its template policy', () => {
  it('signs the account in again and records it (a reauth entry with its cost)', {
    timeout: 180_000,
  }, async () => {
    const e = engine();
    const jobId = 'iam-reauth';
    await submitCheckout(e, { jobId, approvals: ['open-cart'] });
    await waitForJob(e, jobId, waitingAt('approval', 'open-cart'), { timeoutMs: 150_000 });
    await e.shop.expireSessions();

    const result = await e.stack.lambdas.invoke(
      localFunctionArn('Reauthenticate'),
      { tenantId: TENANT, jobId, last: { outcome: 'auth_expired', step: 'open-cart', app: 'shop' } },
      { timeoutMs: 100_000, signal: new AbortController().signal },
    );

    expect(result).toEqual({ outcome: 'reauthenticated', step: 'open-cart', app: 'shop' });
    const { job, entries } = await e.ledger.readJob(TENANT, jobId);
    // The sign-in step signed in first; this invocation's entry is the one at open-cart.
    const reauth = ofType(entries, 'reauth').filter((r) => r.step === 'open-cart');
    expect(reauth).toHaveLength(1);
    expect(reauth[0]?.cost.dynamoWrites).toBeGreaterThan(0);
    expect(job.cost.lambdaInvocations).toBeGreaterThan(0);
    expect(e.stack.iam.refusals).toEqual([]);
  });
});
