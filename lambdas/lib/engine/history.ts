import type { Evidence, LedgerEntry } from '../ledger/types.ts';

/**
 * Questions the engine asks of a job's ledger. The ledger, not the execution, is the source
 * of truth: every handler answers these from a fresh read before it acts.
 */

/** Entries about one step, in order. */
export function entriesFor(entries: readonly LedgerEntry[], step: string): LedgerEntry[] {
  return entries.filter((e) => e.step === step);
}

/** The evidence of each step's latest completion in `entries` (as the ledger keeps it: exact, secrets masked). */
export function verifiedEvidence(entries: readonly LedgerEntry[]): ReadonlyMap<string, Evidence> {
  const found = new Map<string, Evidence>();
  for (const e of entries) {
    if (e.type === 'step-completed' && e.step && e.evidence) found.set(e.step, e.evidence);
  }
  return found;
}

/**
 * A write whose last intent has no completion after it: the previous attempt's outcome is
 * unknown, so the application must be probed before anything else happens.
 */
export function hasOpenIntent(entries: readonly LedgerEntry[], step: string): boolean {
  let open = false;
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'step-started') open = true;
    else if (e.type === 'step-completed') open = false;
    // The application showed no effect (probe) or a reviewer said so: acting again is safe.
    else if (e.type === 'reconciled' && e.detail?.probe === 'absent') open = false;
    else if (e.type === 'review-recorded' && e.detail?.resolution === 'absent') open = false;
  }
  return open;
}

/** A reviewer's word that an uncertain write did happen (they saw it in the application). */
export function reviewedAsDone(entries: readonly LedgerEntry[], step: string): LedgerEntry | undefined {
  let found: LedgerEntry | undefined;
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'step-started') found = undefined;
    else if (e.type === 'review-recorded' && e.detail?.resolution === 'done') found = e;
  }
  return found;
}

/** Attempts made at a step so far (intents written), plus one for the attempt about to start. */
export function nextAttempt(entries: readonly LedgerEntry[], step: string): number {
  return entriesFor(entries, step).filter((e) => e.type === 'step-started').length + 1;
}

/** The latest decision recorded for a step's approval, if any. */
export function approvalDecision(
  entries: readonly LedgerEntry[],
  step: string,
): 'approve' | 'reject' | undefined {
  let decision: 'approve' | 'reject' | undefined;
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'approval-recorded') {
      const d = e.detail?.decision;
      if (d === 'approve' || d === 'reject') decision = d;
    }
  }
  return decision;
}

/** Completed steps' evidence, oldest first (what a person deciding on a wait is shown). */
export function evidenceSoFar(entries: readonly LedgerEntry[]): Record<string, unknown>[] {
  return entries
    .filter((e) => e.type === 'step-completed')
    .map((e) => ({
      step: e.step,
      at: e.at,
      ...(e.evidence ?? {}),
      ...(e.evidenceRef ? { evidenceRef: e.evidenceRef } : {}),
    }));
}
