import { describe, expect, it } from 'vitest';
import {
  approvalDecision,
  evidenceSoFar,
  hasOpenIntent,
  nextAttempt,
  reviewedAsDone,
} from '../../../lambdas/lib/engine/history.ts';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { entryMaker } from '../../support/ledger.ts';

const entry = entryMaker();

describe('Function: hasOpenIntent', () => {
  it.each<[string, LedgerEntry[], boolean]>([
    ['no entries', [], false],
    ['an intent alone', [entry('step-started', 'pay')], true],
    ['an intent then its completion', [entry('step-started', 'pay'), entry('step-completed', 'pay')], false],
    [
      'a completion then a new intent',
      [entry('step-started', 'pay'), entry('step-completed', 'pay'), entry('step-started', 'pay')],
      true,
    ],
    [
      'an intent the probe found absent',
      [entry('step-started', 'pay'), entry('reconciled', 'pay', { probe: 'absent' })],
      false,
    ],
    [
      'an intent a reviewer resolved as absent',
      [entry('step-started', 'pay'), entry('review-recorded', 'pay', { resolution: 'absent' })],
      false,
    ],
    ["another step's intent", [entry('step-started', 'other')], false],
  ])('%s', (_name, entries, expected) => {
    expect(hasOpenIntent(entries, 'pay')).toBe(expected);
  });
});

describe('Function: nextAttempt', () => {
  it('counts intents of the step', () => {
    const entries = [
      entry('step-started', 'pay'),
      entry('reconciled', 'pay', { probe: 'absent' }),
      entry('step-started', 'pay'),
    ];
    expect(nextAttempt(entries, 'pay')).toBe(3);
    expect(nextAttempt(entries, 'other')).toBe(1);
  });
});

describe('Function: approvalDecision', () => {
  it('takes the latest decision for the step', () => {
    expect(approvalDecision([], 'pay')).toBeUndefined();
    const entries = [
      entry('approval-recorded', 'pay', { decision: 'reject' }),
      entry('approval-recorded', 'pay', { decision: 'approve' }),
    ];
    expect(approvalDecision(entries, 'pay')).toBe('approve');
    expect(
      approvalDecision([entry('approval-recorded', 'other', { decision: 'approve' })], 'pay'),
    ).toBeUndefined();
  });
});

describe('Function: reviewedAsDone', () => {
  it('finds a reviewer resolution made after the latest intent only', () => {
    const done = entry('review-recorded', 'pay', { resolution: 'done' });
    expect(reviewedAsDone([entry('step-started', 'pay'), done], 'pay')).toBe(done);
    expect(reviewedAsDone([done, entry('step-started', 'pay')], 'pay')).toBeUndefined();
  });
});

describe('Function: evidenceSoFar', () => {
  it('lists completed steps with their evidence', () => {
    const completed = { ...entry('step-completed', 'search'), evidence: { results: 3 } };
    expect(evidenceSoFar([entry('step-started', 'pay'), completed])).toEqual([
      { step: 'search', at: completed.at, results: 3 },
    ]);
  });
});
