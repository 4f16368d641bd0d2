import { describe, expect, it } from 'vitest';
import { Relayed } from '../../../lambdas/lib/engine/relay.ts';
import type { EngineDeps } from '../../../lambdas/lib/engine/types.ts';
import { runNextStep } from '../../../lambdas/run-step/next-step.ts';

/** Dependencies that throw on any use: a relay must read and write nothing. */
const untouchable = new Proxy({} as EngineDeps, {
  get: (_target, key) => {
    throw new Error(`the relay used deps.${String(key)}`);
  },
});

describe('Function: runNextStep', () => {
  it.each([
    { outcome: 'finished', step: 'last', stepCount: 14 },
    { outcome: 'needs_approval', step: 'pay', stepIndex: 12, wait: { kind: 'approval' } },
    { outcome: 'retry', step: 'pay', retryAfterSeconds: 4, detail: 'the step did not verify' },
    { outcome: 'session_lost', step: 'pay', app: 'shop', detail: 'gone' },
  ])('hands on RunStep\'s "$outcome" unchanged, running nothing', async (previous) => {
    const out = await runNextStep(untouchable, { tenantId: 't', jobId: 'j', previous });
    expect(out).toBeInstanceOf(Relayed);
    expect((out as Relayed<unknown>).result).toBe(previous);
  });

  it('runs the next step after a completed one, and from RunStep (no previous) runs it too', async () => {
    // Reading the ledger is the step's first act: reaching it shows the step ran.
    for (const event of [
      { tenantId: 't', jobId: 'j', previous: { outcome: 'completed', step: 'a', stepIndex: 0 } },
      { tenantId: 't', jobId: 'j' },
    ]) {
      await expect(runNextStep(untouchable, event)).rejects.toThrow(/the relay used deps\./);
    }
  });
});
