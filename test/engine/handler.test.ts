import { describe, expect, it } from 'vitest';
import { warmUpAtInit } from '../../lambdas/lib/engine/handler.ts';

describe('Function: warmUpAtInit', () => {
  it('does nothing at an on-demand init', async () => {
    expect(await warmUpAtInit({ AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand' })).toBe(false);
    expect(await warmUpAtInit({})).toBe(false);
  });

  it('warms up at a provisioned init, and a configuration error is left for the first invocation', async () => {
    // No TABLE_NAME here: building the dependencies fails, which init does not turn into a crash.
    const env = { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' };
    await expect(warmUpAtInit(env)).resolves.toBe(true);
    // A function deployed without browser access still warms up its dependencies, and no browser.
    await expect(warmUpAtInit({ ...env, BELAY_BROWSER_ACCESS: 'none' })).resolves.toBe(true);
  });
});
