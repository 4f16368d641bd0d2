import { describe, expect, it } from 'vitest';
import { effectOf, proves, unprovenReason } from '../../../lambdas/lib/playbooks/effects.ts';

describe('Function: proves', () => {
  it.each([
    ['a read, whatever held before', { kind: 'read' as const }, { a: 1 }, { a: 1 }, true],
    ['a write whose verify did not hold before', { kind: 'write' as const }, null, { id: 1 }, true],
    [
      'a write that creates, held before, no field named',
      { kind: 'write' as const },
      { id: 1 },
      { id: 2 },
      false,
    ],
    [
      'a write that creates, its named field changed',
      { kind: 'write' as const, newEvidence: ['id'] },
      { id: 1, title: 'T' },
      { id: 2, title: 'T' },
      true,
    ],
    [
      'a write that creates, its named field the same',
      { kind: 'write' as const, newEvidence: ['id'] },
      { id: 1 },
      { id: 1 },
      false,
    ],
    [
      'a write that creates, its named field missing',
      { kind: 'write' as const, newEvidence: ['id'] },
      { id: 1 },
      { id: null },
      false,
    ],
    [
      'a write that sets, held before',
      { kind: 'write' as const, effect: 'sets' as const },
      { v: 1 },
      { v: 1 },
      true,
    ],
  ])('%s -> %s', (_, step, before, after, want) => {
    expect(proves(step, before, after)).toBe(want);
  });

  it('treats a write that does not say as one that creates', () => {
    expect(effectOf({ kind: 'write' })).toBe('creates');
    expect(effectOf({ kind: 'write', effect: 'sets' })).toBe('sets');
  });

  it('says why, naming the fields that did not change (never their values)', () => {
    expect(unprovenReason({ kind: 'write' }, { title: 'Trip' }, { title: 'Trip' })).toMatch(
      /already held before the action/,
    );
    const reason = unprovenReason({ kind: 'write', newEvidence: ['postId'] }, { postId: 41 }, { postId: 41 });
    expect(reason).toContain('postId did not change');
    expect(reason).not.toContain('41');
    expect(unprovenReason({ kind: 'write' }, null, { id: 1 })).toBeUndefined();
  });
});
