import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../../lambdas/record-failure/record-failure.ts';

const ref = { tenantId: 't', jobId: 'j' };

describe('Function: describeFailure', () => {
  it.each([
    ['AccountRevokedError', 'account-revoked'],
    ['RetryBudgetExhaustedError', 'retry-budget-exhausted'],
    ['OutcomeNotVerifiedError', 'outcome-not-verified'],
    ['IdentitySignedOutError', 'identity-signed-out'],
    ['CredentialsNotFoundError', 'credentials-not-found'],
    ['SomethingElse', 'error'],
  ])('maps a Lambda error %s to %s', (errorType, reason) => {
    const out = describeFailure({
      ...ref,
      state: {
        error: { Error: errorType, Cause: JSON.stringify({ errorType, errorMessage: 'details here' }) },
      },
    });
    expect(out).toEqual({ reason, message: 'details here' });
  });

  it('maps a wait timeout and a rejection', () => {
    expect(
      describeFailure({ ...ref, state: { error: { Error: 'States.Timeout', Cause: 'timed out' } } }).reason,
    ).toBe('wait-timed-out');
    expect(
      describeFailure({ ...ref, state: { error: { Error: 'Belay.Rejected', Cause: 'not this one' } } }),
    ).toEqual({
      reason: 'rejected',
      message: 'not this one',
    });
  });

  it('redacts and bounds the message', () => {
    const out = describeFailure({
      ...ref,
      state: { error: { Error: 'X', Cause: `card 4242424242424242 ${'y'.repeat(5000)}` } },
    });
    expect(out.message).not.toContain('4242424242424242');
    expect(out.message.length).toBeLessThanOrEqual(1000);
  });

  it('names an outcome the machine had no branch for', () => {
    expect(describeFailure({ ...ref, state: { result: { outcome: 'weird' } } })).toEqual({
      reason: 'unexpected-outcome',
      message: 'no branch for outcome weird',
    });
  });
});
