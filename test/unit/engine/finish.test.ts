import { describe, expect, it } from 'vitest';
import { settledByReviewer } from '../../../lambdas/finish/finish.ts';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import type { ProbeResult } from '../../../lambdas/lib/playbooks/contract.ts';
import { entryMaker } from '../../support/ledger.ts';

const entry = entryMaker('key_reviewer');

const INCONCLUSIVE: ProbeResult = {
  status: 'unknown',
  detail: 'the page says "not updated"; its data matches',
};

/** A write whose attempt was uncertain, which a person reviewed as done. */
const REVIEWED_DONE = [
  entry('step-started', 'pay'),
  entry('step-unconfirmed', 'pay'),
  entry('review-requested', 'pay', { reason: 'unknown' }),
  entry('review-recorded', 'pay', { decision: 'approve', resolution: 'done' }),
  entry('step-completed', 'pay', { reconciled: true }),
];

describe('Function: settledByReviewer', () => {
  it("lets a person's word on the step's uncertain attempt verify a finish check that cannot conclude", () => {
    expect(settledByReviewer(REVIEWED_DONE, 'pay', INCONCLUSIVE)).toEqual({
      reviewedBy: 'key_reviewer',
      finishCheck: 'inconclusive',
    });
  });

  it.each<[string, ProbeResult]>([
    ['absent', { status: 'absent', detail: 'the record holds other values' }],
    ['twice', { status: 'duplicate', count: 2, evidence: {}, detail: 'listed twice' }],
  ])('leaves a check that found the write %s to a person', (_, probe) => {
    expect(settledByReviewer(REVIEWED_DONE, 'pay', probe)).toBeUndefined();
  });

  it.each<[string, LedgerEntry[]]>([
    ['nobody reviewed the step', [entry('step-started', 'pay'), entry('step-completed', 'pay')]],
    [
      'the reviewer said it was absent',
      [
        entry('step-started', 'pay'),
        entry('review-recorded', 'pay', { decision: 'approve', resolution: 'absent' }),
        entry('step-started', 'pay'),
        entry('step-completed', 'pay'),
      ],
    ],
    [
      'the review was of an earlier attempt (a new intent since)',
      [...REVIEWED_DONE.slice(0, 4), entry('step-started', 'pay'), entry('step-completed', 'pay')],
    ],
    ['the review was of another step', REVIEWED_DONE.map((e) => ({ ...e, step: 'ship' }))],
  ])('asks again when %s', (_, entries) => {
    expect(settledByReviewer(entries, 'pay', INCONCLUSIVE)).toBeUndefined();
  });
});
