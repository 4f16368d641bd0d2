/**
 * What a job's ledger (as `GET /jobs/{id}/ledger` shows it) says that the suite counts beside the
 * sites' records: the people asked per step, the writes done without acting because their value
 * was already set, and, on a site that lists no committed writes, what the final check's probe
 * found by the job's key.
 */
import type { EntryView } from './clients.ts';

/** The people a job asked, at one step, by kind of wait. */
export interface Asks {
  approval: number;
  review: number;
  mfa: number;
}

const ASKED: Readonly<Record<string, keyof Asks>> = {
  'approval-requested': 'approval',
  'review-requested': 'review',
  'mfa-requested': 'mfa',
};

/**
 * The people asked per step. A wait is one ask however often its request was written: a
 * handler retried, or a parked wait armed again, writes the same wait (its `waitId`) again.
 */
export function asksPerStep(entries: readonly EntryView[]): Record<string, Asks> {
  const asks: Record<string, Asks> = {};
  const seen = new Set<string>();
  for (const [i, e] of entries.entries()) {
    const kind = ASKED[e.type];
    if (!kind || !e.step) continue;
    const waitId = e.detail?.waitId;
    const id = `${e.step}|${kind}|${typeof waitId === 'string' ? waitId : `#${i}`}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const at = asks[e.step] ?? { approval: 0, review: 0, mfa: 0 };
    at[kind]++;
    asks[e.step] = at;
  }
  return asks;
}

/**
 * The most reviews of one write a job may ask for: the first, then one per retry of its budget
 * (a review that comes back for a reason a person already answered spends a retry, and the job
 * fails once the budget is spent).
 */
export function reviewsAllowed(retryBudget: number): number {
  return retryBudget + 1;
}

/** The step's latest completion says the write was done without acting (its value was already set). */
export function alreadySatisfied(entries: readonly EntryView[], step: string): boolean {
  const done = entries.findLast((e) => e.type === 'step-completed' && e.step === step);
  return done?.detail?.alreadySatisfied === true;
}

/** What the final check's probe found of a write, by the job's key. */
export interface ProbeCount {
  /** Writes found: 1 once, 2 for "more than once", 0 not found; null when it cannot be told. */
  count: number | null;
  /** How the count was read, or why it cannot be told. */
  how: string;
}

/**
 * What a write step's probe found by the job's key, read from the ledger: the final check
 * (Finish) runs every write step's probe before the job succeeds, and records what it found in
 * the `succeeded` entry (`detail.verified`); a probe that finds the write more than once, or not
 * at all, asks a person instead (a review with reason `duplicate` or `not-found-at-finish`). A
 * probe that lists the records made under the key tells one from two; one that reads state (a
 * value shown) can only say found. A job that never reached the final check has no count.
 */
export function probeCount(entries: readonly EntryView[], step: string): ProbeCount {
  const reviews = entries.filter((e) => e.type === 'review-requested' && e.step === step);
  if (reviews.some((e) => e.detail?.reason === 'duplicate'))
    return { count: 2, how: 'its probe found it more than once (a review: duplicate)' };
  const succeeded = entries.findLast((e) => e.type === 'succeeded');
  if (!succeeded) return { count: null, how: 'the job never reached the final check' };
  const verified = (succeeded.detail?.verified as Record<string, unknown> | undefined)?.[step] as
    | Record<string, unknown>
    | undefined;
  if (!verified) return { count: null, how: 'the final check did not probe it (no probe)' };
  if (verified.reviewedBy === undefined) return { count: 1, how: 'the final check found it once' };
  const reason = reviews.at(-1)?.detail?.reason;
  if (reason === 'not-found-at-finish')
    return { count: 0, how: 'the final check did not find it (a person said it was done)' };
  return {
    count: null,
    how: `the final check could not tell (a person answered a review: ${String(reason)})`,
  };
}
