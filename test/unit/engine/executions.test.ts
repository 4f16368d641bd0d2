import { describe, expect, it } from 'vitest';
import { executionName, executionNamePrefix, generationOf } from '../../../lambdas/lib/engine/executions.ts';
import { idempotencyKeyOf, type JobIdentity } from '../../../lambdas/lib/engine/job-identity.ts';

const job = (tenantId: string, jobId: string, createdAt = '2026-03-01T10:00:00.000Z'): JobIdentity => ({
  tenantId,
  jobId,
  createdAt,
});

describe('Function: executionName', () => {
  it('is valid for Step Functions and at most 80 characters', () => {
    const name = executionName(job('tenant-with-a-long-name', 'j'.repeat(64)), 12_345);
    expect(name.length).toBeLessThanOrEqual(80);
    expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('differs between tenants with the same job id, and between generations', () => {
    expect(executionName(job('a', 'job-1'))).not.toBe(executionName(job('b', 'job-1')));
    expect(executionName(job('a', 'job-1'), 0)).not.toBe(executionName(job('a', 'job-1'), 1));
    expect(executionName(job('a', 'job-1'), 3)).toBe(executionName(job('a', 'job-1'), 3));
  });

  it('differs for a job submitted again under the id of one that expired (Step Functions keeps names 90 days)', () => {
    const first = job('a', 'job-1', '2026-03-01T10:00:00.000Z');
    const again = job('a', 'job-1', '2026-04-15T08:30:00.000Z');
    expect(executionName(again, 0)).not.toBe(executionName(first, 0));
    // Both start with the id's prefix: every execution of the id is found by it.
    expect(executionName(again, 0).startsWith(executionNamePrefix('a', 'job-1'))).toBe(true);
    expect(executionName(first, 2).startsWith(executionNamePrefix('a', 'job-1'))).toBe(true);
  });

  it('round-trips the generation', () => {
    expect(generationOf(executionName(job('a', 'job-g9'), 7))).toBe(7);
    expect(generationOf('not-ours')).toBe(-1);
  });
});

describe('Function: idempotencyKeyOf', () => {
  it('is stable for one job and step, and starts with the job and step ids', () => {
    const key = idempotencyKeyOf(job('a', 'order-1'), 'place-order');
    expect(key).toBe(idempotencyKeyOf(job('a', 'order-1'), 'place-order'));
    expect(key).toMatch(/^order-1:place-order:[0-9a-f]{12}$/);
  });

  it('never equals the key of another tenant, another step, or a later job with the same id', () => {
    const key = idempotencyKeyOf(job('a', 'order-1'), 'place-order');
    expect(idempotencyKeyOf(job('b', 'order-1'), 'place-order')).not.toBe(key);
    expect(idempotencyKeyOf(job('a', 'order-1'), 'pay')).not.toBe(key);
    expect(idempotencyKeyOf(job('a', 'order-1', '2026-05-01T00:00:00.000Z'), 'place-order')).not.toBe(key);
  });
});
