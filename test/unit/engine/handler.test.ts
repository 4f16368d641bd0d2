import { beforeEach, describe, expect, it, vi } from 'vitest';

// What init would do, watched: building the engine's dependencies (failing here, as with a
// configuration error) and loading the browser library.
const buildDeps = vi.hoisted(() => vi.fn(async () => Promise.reject(new Error('TABLE_NAME is not set'))));
const preload = vi.hoisted(() => vi.fn(async () => undefined));
vi.mock('../../../lambdas/lib/engine/runtime.ts', async (original) => ({
  ...(await original<typeof import('../../../lambdas/lib/engine/runtime.ts')>()),
  engineDeps: buildDeps,
}));
vi.mock('../../../lambdas/lib/browser/adapter.ts', async (original) => ({
  ...(await original<typeof import('../../../lambdas/lib/browser/adapter.ts')>()),
  preloadBrowserLibraries: preload,
}));

const { engineHandler, warmUpAtInit } = await import('../../../lambdas/lib/engine/handler.ts');
const { InvocationTimeoutError } = await import('../../../lambdas/lib/engine/errors.ts');

beforeEach(() => {
  buildDeps.mockClear();
  preload.mockClear();
});

describe('Function: warmUpAtInit', () => {
  it('does nothing at an on-demand init (the module loaded without warming up either)', async () => {
    expect(await warmUpAtInit({ AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand' })).toBe(false);
    expect(await warmUpAtInit({})).toBe(false);
    expect(buildDeps).not.toHaveBeenCalled();
    expect(preload).not.toHaveBeenCalled();
  });

  it('at a provisioned init builds the dependencies and loads the browser library; a configuration error is left for the first invocation', async () => {
    const env = { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' };
    await expect(warmUpAtInit(env)).resolves.toBe(true);
    expect(buildDeps).toHaveBeenCalledTimes(1);
    expect(preload).toHaveBeenCalledTimes(1);
    // The first invocation reports it (and runs nothing).
    const core = vi.fn(async () => 'ran');
    const handler = engineHandler('RunStep', core);
    await expect(handler({ tenantId: 't', jobId: 'j' }, {} as never)).rejects.toThrow(
      'TABLE_NAME is not set',
    );
    expect(core).not.toHaveBeenCalled();
  });

  it('loads no browser library in a function deployed without browser access', async () => {
    const env = { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency', BELAY_BROWSER_ACCESS: 'none' };
    await expect(warmUpAtInit(env)).resolves.toBe(true);
    expect(buildDeps).toHaveBeenCalledTimes(1);
    expect(preload).not.toHaveBeenCalled();
  });
});

describe('Function: engineHandler', () => {
  it('answers an invocation that reaches its timeout with InvocationTimeoutError, which the state machine retries', async () => {
    // The dependencies never come (a hung call): the invocation runs into its deadline.
    buildDeps.mockImplementationOnce(() => new Promise(() => undefined));
    const handler = engineHandler(
      'RunStep',
      vi.fn(async () => 'ran'),
    );
    const context = { getRemainingTimeInMillis: () => 60 } as never;
    const err = await handler({ tenantId: 't', jobId: 'j' }, context).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvocationTimeoutError);
    expect((err as Error).name).toBe('InvocationTimeoutError');
    expect((err as { retryable?: boolean }).retryable).toBe(true);
  });
});

describe('Function: engineHandler with a relayed result', () => {
  it('gives the state machine the result inside a Relayed, unchanged', async () => {
    const { Relayed } = await import('../../../lambdas/lib/engine/relay.ts');
    const previous = { outcome: 'needs_approval', step: 'pay', stepIndex: 3, wait: { kind: 'approval' } };
    // Dependencies whose ledger records nothing: only the answer is under test here.
    buildDeps.mockImplementationOnce(async () =>
      Promise.resolve({
        clock: () => new Date(0),
        ledger: { append: async () => undefined },
        log: { warn: () => undefined },
      } as never),
    );
    const handler = engineHandler('RunStep', async () => new Relayed(previous));
    const out = await handler(
      { tenantId: 't', jobId: 'j', previous } as never,
      { getRemainingTimeInMillis: () => 60_000 } as never,
    );
    expect(out).toEqual(previous);
    expect(out).not.toBeInstanceOf(Relayed);
  });
});
