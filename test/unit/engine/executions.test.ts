import { describe, expect, it } from 'vitest';
import { executionName, generationOf } from '../../../lambdas/lib/engine/executions.ts';

describe('Function: executionName', () => {
  it('is valid for Step Functions and at most 80 characters', () => {
    const name = executionName('tenant-with-a-long-name', 'j'.repeat(64), 12);
    expect(name.length).toBeLessThanOrEqual(80);
    expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('differs between tenants with the same job id, and between generations', () => {
    expect(executionName('a', 'job-1')).not.toBe(executionName('b', 'job-1'));
    expect(executionName('a', 'job-1', 0)).not.toBe(executionName('a', 'job-1', 1));
    expect(executionName('a', 'job-1', 3)).toBe(executionName('a', 'job-1', 3));
  });

  it('round-trips the generation', () => {
    expect(generationOf(executionName('a', 'job-g9', 7))).toBe(7);
    expect(generationOf('not-ours')).toBe(-1);
  });
});
