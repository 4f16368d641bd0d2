import type { Ledger } from '../ledger/ledger.ts';
import type { Evidence, Job, LedgerEntry } from '../ledger/types.ts';
import type {
  ActionEntryInput,
  ActionEntryType,
  ModelCallInput,
  RecordedEntry,
  StepActions,
  StepCache,
} from '../playbooks/contract.ts';
import { StepRecordRefusedError } from '../playbooks/errors.ts';
import { NO_STEP_CACHE } from '../playbooks/memory-actions.ts';
import { entriesFor, verifiedEvidence } from './history.ts';

/**
 * The step's own action record (`StepContext.actions`): what an agent step chose, in order, as
 * the ledger holds it, and how it adds to it. The engine owns the ledger; the step sees only
 * this port.
 */

const ACTION_ENTRY_TYPES: ReadonlySet<string> = new Set<ActionEntryType>([
  'action-chosen',
  'action-healed',
  'action-refused',
]);

/**
 * The step's record in force, oldest first: its action entries and the comments people gave
 * when they answered its questions (review decisions). A failed attempt clears it: a
 * `step-failed` entry, or a `reconciled` entry that found the write absent after the attempt
 * acted (`failedAttempt`); a replay after those would only repeat what failed.
 */
export function actionRecord(entries: readonly LedgerEntry[], step: string): RecordedEntry[] {
  let record: RecordedEntry[] = [];
  for (const e of entriesFor(entries, step)) {
    if (e.type === 'step-failed' || (e.type === 'reconciled' && e.detail?.failedAttempt !== undefined)) {
      record = [];
    } else if (ACTION_ENTRY_TYPES.has(e.type)) {
      record.push({ type: e.type as ActionEntryType, detail: e.detail ?? {}, at: e.at });
    } else if (e.type === 'review-recorded' && e.detail?.decision === 'approve') {
      // Only a question the step asked is answered in its record; other reviews of the step
      // (a changed layout, an uncertain write) answer the engine, not the step.
      const asked = record.filter((r) => r.type === 'action-chosen' && askedPerson(r.detail)).length;
      const answered = record.filter((r) => r.type === 'answer').length;
      if (asked > answered) {
        const comment = typeof e.detail.comment === 'string' ? e.detail.comment : '';
        record.push({ type: 'answer', detail: { answer: comment, by: e.actor ?? 'a person' }, at: e.at });
      }
    }
  }
  return record;
}

/** Evidence of the job's verified steps, by step id (the latest completion of each). */
function evidenceByStep(entries: readonly LedgerEntry[]): Record<string, Evidence> {
  return Object.fromEntries(verifiedEvidence(entries));
}

/** How a live record writes: one entry at a time, fenced by the job's version (RunStep's attempt). */
export interface ActionWriter {
  /** Writes the entry for the step; resolves once it is in the ledger. */
  write(entry: ActionEntryInput): Promise<void>;
}

/** The model calls a step records outside its action record: a probe's answers, and calls that failed after counting tokens. */
export type ModelCallEntryType = 'probe-answered' | 'model-call-failed';

/** Where a step's model calls outside its action record go: the ledger (`probe-answered`, `model-call-failed`). */
export type ModelCallWriter = (entry: ModelCallInput, type?: ModelCallEntryType) => Promise<void>;

/**
 * Appends a step's probe answers (`probe-answered`) and its failed but paid model calls
 * (`model-call-failed`) with `ledger.append`, which moves no version: RunStep, Reconcile and
 * Finish write what the probe found under the job's version they read, and an answer recorded
 * before that must not make their write stale.
 */
export function modelCallAppender(
  ledger: Pick<Ledger, 'append'>,
  job: Job,
  step: { id: string; app: string },
  stepIndex: number,
): ModelCallWriter {
  return async (entry, type = 'probe-answered') => {
    await ledger.append(job.tenantId, job.jobId, {
      type,
      step: step.id,
      stepIndex,
      sessionId: job.sessions[step.app]?.sessionId,
      identityId: job.sessions[step.app]?.identityId,
      detail: entry.detail,
      // The entry and the job's cost totals, in one transaction.
      cost: { dynamoWrites: 2, ...entry.cost },
    });
  };
}

/** The record of a step that runs in this invocation (RunStep): entries it writes join it at once. */
export function liveStepActions(
  job: Job,
  entries: readonly LedgerEntry[],
  step: string,
  writer: ActionWriter,
  cache: StepCache,
  modelCalls: ModelCallWriter,
): StepActions {
  const record = actionRecord(entries, step);
  return {
    model: job.model,
    cache,
    evidence: evidenceByStep(entries),
    recorded: () => [...record],
    record: async (entry) => {
      await writer.write(entry);
      record.push({ type: entry.type, detail: entry.detail, at: new Date().toISOString() });
    },
    recordProbeAnswer: (entry) => modelCalls(entry, 'probe-answered'),
    recordFailedCall: (entry) => modelCalls(entry, 'model-call-failed'),
  };
}

/**
 * The record as a function that only looks at the step sees it (a probe in Reconcile or
 * Finish, a sign-in): readable, never written. A probe's answers are still recorded: they are
 * no part of the record.
 */
export function readOnlyStepActions(
  job: Job,
  entries: readonly LedgerEntry[],
  step: string,
  modelCalls: ModelCallWriter,
): StepActions {
  const record = actionRecord(entries, step);
  const refuse = async (): Promise<never> => {
    throw new StepRecordRefusedError(step);
  };
  return {
    model: job.model,
    cache: NO_STEP_CACHE,
    evidence: evidenceByStep(entries),
    recorded: () => [...record],
    record: refuse,
    recordProbeAnswer: (entry) => modelCalls(entry, 'probe-answered'),
    recordFailedCall: (entry) => modelCalls(entry, 'model-call-failed'),
  };
}

/** The entry records an `ask_person` action (its `action` as agent steps record it). */
function askedPerson(detail: Record<string, unknown>): boolean {
  const action = detail.action;
  return (
    typeof action === 'object' && action !== null && (action as { name?: unknown }).name === 'ask_person'
  );
}
