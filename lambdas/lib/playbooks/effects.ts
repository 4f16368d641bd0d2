/**
 * What a write's evidence proves, given what its verify read just before the action. A verify
 * that already held before a write proves nothing about the write (an earlier record with the
 * same title satisfies "a record with this title is listed"): the engine (RunStep) and the
 * declarative verify (which polls until the page shows something new) judge by these rules.
 */
import type { Evidence } from '../ledger/types.ts';
import type { Step, WriteEffect } from './contract.ts';

/** What a write does when its step does not say: a write that creates (the strict rule). */
export function effectOf(step: Pick<Step, 'kind' | 'effect'>): WriteEffect {
  return step.effect ?? 'creates';
}

/**
 * Does `after` prove the write, when its verify read `before` just before the action? It does
 * when the verify did not hold before; for a write that creates, when it held before, only if
 * the step names fields that must be new and each of them is there and changed. A write that sets
 * state is done when its verify holds: `before` says nothing against it.
 *
 * @example
 * proves({ kind: 'write', newEvidence: ['postId'] }, { postId: 7 }, { postId: 9 }); // true
 * proves({ kind: 'write' }, { title: 'Trip' }, { title: 'Trip' }); // false: held before, no field named
 */
export function proves(
  step: Pick<Step, 'kind' | 'effect' | 'newEvidence'>,
  before: Evidence | null | undefined,
  after: Evidence,
): boolean {
  if (step.kind !== 'write' || before === null || before === undefined) return true;
  if (effectOf(step) === 'sets') return true;
  const fields = step.newEvidence ?? [];
  if (fields.length === 0) return false;
  return fields.every((f) => {
    const now = after[f];
    return now !== undefined && now !== null && !sameValue(now, before[f]);
  });
}

/**
 * Can any evidence prove the write, given `before`? Not for a write that creates, whose verify
 * held before the action and that names no field as new: waiting for the page is no use then.
 */
export function provable(
  step: Pick<Step, 'kind' | 'effect' | 'newEvidence'>,
  before: Evidence | null | undefined,
): boolean {
  return (
    step.kind !== 'write' ||
    before === null ||
    before === undefined ||
    effectOf(step) === 'sets' ||
    (step.newEvidence?.length ?? 0) > 0
  );
}

/** Why `after` does not prove the write (for the ledger and people), or undefined when it does. */
export function unprovenReason(
  step: Pick<Step, 'kind' | 'effect' | 'newEvidence'>,
  before: Evidence | null | undefined,
  after: Evidence,
): string | undefined {
  if (proves(step, before, after)) return undefined;
  const fields = step.newEvidence ?? [];
  if (fields.length === 0)
    return 'the verify already held before the action (an earlier record satisfies it), so it cannot prove this write';
  const same = fields.filter(
    (f) => after[f] === undefined || after[f] === null || sameValue(after[f], before?.[f]),
  );
  return `the verify already held before the action and ${same.join(', ')} did not change, so it names an earlier record`;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return JSON.stringify(a) === JSON.stringify(b);
}
