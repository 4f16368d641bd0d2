/**
 * What the chaos suite reads off a job's ledger without a stack: the people asked per step, a
 * write done without acting (already satisfied), and what the final check's probe found of a
 * write by the job's key (the count on a site that lists no committed writes).
 */
import { describe, expect, it } from 'vitest';
import type { EntryView } from '../../../tools/chaos/clients.ts';
import { alreadySatisfied, asksPerStep, probeCount, reviewsAllowed } from '../../../tools/chaos/ledger.ts';

let clock = 0;
const entry = (type: string, step?: string, detail?: Record<string, unknown>): EntryView => ({
  type,
  ...(step ? { step } : {}),
  at: new Date(Date.UTC(2026, 0, 1, 10, 0, clock++)).toISOString(),
  ...(detail ? { detail } : {}),
});

describe('Function: asksPerStep', () => {
  it('counts each wait once per step and kind, however often its request was written', () => {
    const entries = [
      entry('approval-requested', 'place-order', { waitId: 'w1' }),
      entry('approval-recorded', 'place-order'),
      entry('review-requested', 'save', { reason: 'uncertain', waitId: 'w2' }),
      // The same wait written again (a retried handler, a parked wait armed again).
      entry('review-requested', 'save', { reason: 'uncertain', waitId: 'w2' }),
      entry('review-recorded', 'save'),
      entry('review-requested', 'save', { reason: 'uncertain', waitId: 'w3' }),
      entry('mfa-requested', 'sign-in'),
      entry('mfa-requested', 'sign-in'),
      entry('step-completed', 'save'),
    ];
    expect(asksPerStep(entries)).toEqual({
      'place-order': { approval: 1, review: 0, mfa: 0 },
      save: { approval: 0, review: 2, mfa: 0 },
      // Without a wait id each request is an ask of its own.
      'sign-in': { approval: 0, review: 0, mfa: 2 },
    });
    expect(asksPerStep([])).toEqual({});
  });

  it('allows the first review of a write and one more per retry of the budget', () => {
    expect(reviewsAllowed(3)).toBe(4);
    expect(reviewsAllowed(0)).toBe(1);
  });
});

describe('Function: alreadySatisfied', () => {
  it('reads the step’s latest completion', () => {
    const done = [entry('step-completed', 'set-name', { alreadySatisfied: true })];
    expect(alreadySatisfied(done, 'set-name')).toBe(true);
    expect(alreadySatisfied(done, 'other')).toBe(false);
    expect(
      alreadySatisfied([entry('step-started', 'set-name'), entry('step-completed', 'set-name')], 'set-name'),
    ).toBe(false);
  });
});

describe('Function: probeCount', () => {
  const succeeded = (verified: Record<string, unknown>): EntryView =>
    entry('succeeded', undefined, { verified });

  it.each([
    ['found once by the final check', [succeeded({ save: { noteId: 7 } })], 1, /found it once/],
    [
      'found more than once (a review: duplicate)',
      [entry('review-requested', 'save', { reason: 'duplicate' }), succeeded({ save: { reviewedBy: 'p' } })],
      2,
      /more than once/,
    ],
    [
      'not found at the final check, a person said done',
      [
        entry('review-requested', 'save', { reason: 'not-found-at-finish' }),
        succeeded({ save: { reviewedBy: 'p' } }),
      ],
      0,
      /did not find it/,
    ],
    [
      'inconclusive at the final check',
      [
        entry('review-requested', 'save', { reason: 'inconclusive' }),
        succeeded({ save: { reviewedBy: 'p' } }),
      ],
      null,
      /could not tell/,
    ],
    [
      'a job that never reached the final check',
      [entry('step-completed', 'save'), entry('failed')],
      null,
      /never reached/,
    ],
    ['a write the final check did not probe', [succeeded({})], null, /did not probe/],
  ])('%s', (_what, entries, count, how) => {
    const found = probeCount(entries, 'save');
    expect(found.count).toBe(count);
    expect(found.how).toMatch(how);
  });

  it('counts a duplicate the probe found at the step even when the job then failed', () => {
    const entries = [entry('review-requested', 'save', { reason: 'duplicate' }), entry('failed')];
    expect(probeCount(entries, 'save').count).toBe(2);
  });
});
