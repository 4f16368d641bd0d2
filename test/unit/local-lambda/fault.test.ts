import { describe, expect, it } from 'vitest';
import { FAULT_HOOKS_ENV, faultHooksEnabled, faultPoint } from '../../../lambdas/lib/fault.ts';

describe('Function: faultPoint', () => {
  it('is a no-op outside the local Lambda runner, even in a process with an IPC channel', async () => {
    expect(process.env[FAULT_HOOKS_ENV]).toBeUndefined();
    expect(faultHooksEnabled()).toBe(false);
    const sent: unknown[] = [];
    const original = process.send;
    process.send = ((message: unknown) => {
      sent.push(message);
      return true;
    }) as typeof process.send;
    try {
      await faultPoint('mid-action', { jobId: 'j', step: 's', stepIndex: 1 });
    } finally {
      process.send = original;
    }
    expect(sent).toEqual([]);
  });
});
