import { randomUUID } from 'node:crypto';
import type { JobStatus, LedgerEntry, WaitKind } from '../ledger/types.ts';

/** The error a rejected wait fails with (the API's SendTaskFailure, a rejection found while parked): reason `rejected`. */
export const REJECTED_ERROR = 'Belay.Rejected';

/**
 * How long each kind of human wait lasts; the state machine's `TimeoutSeconds` (tested to match).
 * A takeover has no fixed length: its wait is bounded by the session's idle timeout
 * ({@link takeoverWaitSeconds}), carried in its request; this is the most it may be.
 */
export const WAIT_TIMEOUT_SECONDS: Readonly<Record<WaitKind, number>> = {
  approval: 604_800,
  mfa: 86_400,
  review: 604_800,
  takeover: 86_400,
};

/**
 * How long a takeover waits for the person: the session's idle timeout less a margin, so the
 * wait ends (and the job says so) before the provider ends a session nobody is connected to.
 * While the person's live view is open it counts as a client and the session is not idle; the
 * margin covers RunStep reattaching after the wait.
 */
export function takeoverWaitSeconds(settings: { sessionIdleTimeoutMinutes: number }): number {
  const idle = settings.sessionIdleTimeoutMinutes * 60;
  return Math.max(60, Math.min(WAIT_TIMEOUT_SECONDS.takeover, idle - Math.min(300, Math.floor(idle / 5))));
}

export const WAIT_STATUS: Readonly<Record<WaitKind, Extract<JobStatus, `WAITING_${string}`>>> = {
  approval: 'WAITING_APPROVAL',
  mfa: 'WAITING_MFA',
  review: 'WAITING_REVIEW',
  takeover: 'WAITING_TAKEOVER',
};

export const WAIT_ENTRY = {
  approval: 'approval-requested',
  mfa: 'mfa-requested',
  review: 'review-requested',
  takeover: 'takeover-requested',
} as const;

export function isWaitKind(value: unknown): value is WaitKind {
  return value === 'approval' || value === 'mfa' || value === 'review' || value === 'takeover';
}

/**
 * Waits that park: after `parkAfterSeconds` the job gives its browser and lease back until
 * the person answers. An MFA wait never parks: the one-time code belongs to the sign-in
 * that asked for it, in that very session.
 */
/**
 * The reason of a review an agent step asked for with `ask_person`: a question to whoever
 * submitted the job, whose answer (the decision's comment) the step reads when it runs again.
 */
export const AGENT_QUESTION_REASON = 'agent-question';

export const PARKABLE_KINDS: readonly WaitKind[] = ['approval', 'review'];

export function isParkable(kind: WaitKind): boolean {
  return PARKABLE_KINDS.includes(kind);
}

/**
 * A wait for a person that may park (approval, review), as the handler asking for it returns
 * it at `wait`: the state machine's callback task takes it as its input (`InputPath`), so its
 * `Payload` is the AwaitHuman event and `Payload.parkAfterSeconds` the first wait's timeout;
 * if nobody answers in time, the parked wait reads the same.
 */
export interface WaitRequest {
  Payload: {
    tenantId: string;
    jobId: string;
    kind: 'approval' | 'review';
    step: string;
    /** The outcome that asked for it (`needs_approval`, `layout_changed`, `unknown`). */
    reason: string;
    parkAfterSeconds: number;
    /**
     * This request's own id: a retried AwaitHuman carries the same one, so it can tell that a
     * decision recorded since the first attempt answers it (a new wait gets a new id).
     */
    waitId: string;
  };
}

/**
 * A step asked a person to act in the live browser (`ctx.takeover`): the AwaitTakeover state
 * takes it as its input, as AwaitReview takes a {@link WaitRequest}. `timeoutSeconds` is the
 * wait's length ({@link takeoverWaitSeconds}); `question` what the step asked the person to do.
 */
export interface TakeoverWaitRequest {
  Payload: {
    tenantId: string;
    jobId: string;
    kind: 'takeover';
    step: string;
    reason: 'takeover';
    question: string;
    timeoutSeconds: number;
    waitId: string;
  };
}

export function takeoverWaitRequest(
  ref: { tenantId: string; jobId: string },
  step: string,
  question: string,
  timeoutSeconds: number,
): TakeoverWaitRequest {
  return {
    Payload: {
      tenantId: ref.tenantId,
      jobId: ref.jobId,
      kind: 'takeover',
      step,
      reason: 'takeover',
      question,
      timeoutSeconds,
      waitId: randomUUID(),
    },
  };
}

export function waitRequest(
  ref: { tenantId: string; jobId: string },
  kind: 'approval' | 'review',
  step: string,
  reason: string,
  parkAfterSeconds: number,
): WaitRequest {
  return {
    Payload: {
      tenantId: ref.tenantId,
      jobId: ref.jobId,
      kind,
      step,
      reason,
      parkAfterSeconds,
      waitId: randomUUID(),
    },
  };
}

/** The entry a person's decision on each kind of wait is recorded as (MFA has none: its code is not a decision). */
export const DECISION_ENTRY = {
  approval: 'approval-recorded',
  review: 'review-recorded',
} as const;

type EntryLike = { type: string; step?: string; detail?: Record<string, unknown> };

/**
 * The latest entry of `type` at `step` since the latest wait of `kind` was requested there
 * (a decision, a parking...), or undefined: one asked again, the earlier ones no longer count.
 */
export function sinceWaitRequested<E extends EntryLike>(
  entries: readonly E[],
  kind: WaitKind,
  step: string,
  type: string,
): E | undefined {
  let found: E | undefined;
  for (const e of entries) {
    if (e.step !== step) continue;
    if (e.type === WAIT_ENTRY[kind]) found = undefined;
    else if (e.type === type) found = e;
  }
  return found;
}

/**
 * Is the latest request of this kind at this step answered in the ledger? `approve`/`reject`
 * from the decision recorded after it (approvals and reviews), else undefined.
 */
export function decisionSinceRequest(
  entries: readonly EntryLike[],
  kind: WaitKind,
  step: string,
): 'approve' | 'reject' | undefined {
  if (kind === 'mfa' || kind === 'takeover') return undefined;
  const d = sinceWaitRequested(entries, kind, step, DECISION_ENTRY[kind])?.detail?.decision;
  return d === 'approve' || d === 'reject' ? d : undefined;
}

/** A person's earlier answer to a review of the same step for the same reason. */
export interface EarlierAnswer {
  reason: string;
  /** approve or reject, and for a review of an uncertain write what they found (done, absent). */
  answer: string;
  by: string;
  at: string;
}

/**
 * The answers people gave to reviews of `step` for `reason` since the step last completed, oldest
 * first: a write that comes back to review for the same reason after an answer has not been
 * settled by it (the person's "absent" was tried and did not hold).
 */
export function answeredReviews(
  entries: readonly LedgerEntry[],
  step: string,
  reason: string,
): EarlierAnswer[] {
  const found: EarlierAnswer[] = [];
  let asked: string | undefined;
  for (const e of entries) {
    if (e.step !== step) continue;
    if (e.type === 'step-completed') {
      found.length = 0;
      asked = undefined;
    } else if (e.type === WAIT_ENTRY.review) asked = String(e.detail?.reason ?? '');
    else if (e.type === DECISION_ENTRY.review && asked === reason) {
      const d = e.detail ?? {};
      found.push({
        reason,
        answer: [d.decision, d.resolution].filter((x) => typeof x === 'string').join(', ') || 'answered',
        by: e.actor ?? String(d.decidedBy ?? 'a person'),
        at: e.at,
      });
      asked = undefined;
    }
  }
  return found;
}
