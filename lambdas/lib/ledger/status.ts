import { InvalidInputError } from './errors.ts';
import type { UpdateBuilder } from './expression.ts';
import { epochSeconds, statusPk } from './keys.ts';
import { JOB_STATUSES, type JobStatus, type PendingWait, TERMINAL_STATUSES, type WaitKind } from './types.ts';

/** Status bookkeeping shared by the writes that change a job's status. */

export type WaitingStatus = 'WAITING_APPROVAL' | 'WAITING_MFA' | 'WAITING_REVIEW' | 'WAITING_TAKEOVER';

export const WAIT_KIND_OF: Readonly<Record<WaitingStatus, WaitKind>> = {
  WAITING_APPROVAL: 'approval',
  WAITING_MFA: 'mfa',
  WAITING_REVIEW: 'review',
  WAITING_TAKEOVER: 'takeover',
};

export function isWaitingStatus(status: JobStatus): status is WaitingStatus {
  return status in WAIT_KIND_OF;
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export function assertStatus(field: string, value: unknown): asserts value is JobStatus {
  if (!(JOB_STATUSES as readonly unknown[]).includes(value)) {
    throw new InvalidInputError(field, `"${String(value)}" is not one of ${JOB_STATUSES.join(', ')}`);
  }
}

/** Refuses a wait that does not match the waiting status it is stored with. */
export function assertWait(wait: PendingWait, status: WaitingStatus): void {
  if (wait.kind !== WAIT_KIND_OF[status]) {
    throw new InvalidInputError('wait.kind', `"${wait.kind}" does not match status ${status}`);
  }
  if (typeof wait.taskToken !== 'string' || wait.taskToken.length === 0) {
    throw new InvalidInputError('wait.taskToken', 'must be a non-empty string');
  }
  if (!Number.isInteger(wait.stepIndex) || wait.stepIndex < 0) {
    throw new InvalidInputError('wait.stepIndex', 'must be a non-negative integer');
  }
}

/**
 * Sets the status and keeps `gsi1pk` (jobs by status) in step with it. A terminal status
 * also sets `finishedAt` and the TTL (`expiresAt`, epoch seconds, `ttlDays` from now); the first
 * move to RUNNING sets `startedAt`, every move to QUEUED `queuedSince`.
 */
export function applyStatus(
  u: UpdateBuilder,
  tenantId: string,
  to: JobStatus,
  now: Date,
  ttlDays: number,
): void {
  u.set('status', to).set('gsi1pk', statusPk(tenantId, to));
  // Jobs are created QUEUED: the first move to RUNNING is when the job took its browser lease.
  if (to === 'RUNNING') u.setIfMissing('startedAt', now.toISOString());
  if (to === 'QUEUED') u.set('queuedSince', now.toISOString());
  if (isTerminal(to)) {
    u.set('finishedAt', now.toISOString()).set('expiresAt', epochSeconds(now) + Math.round(ttlDays * 86_400));
    // Out of the index of unfinished jobs (gsi3 is sparse).
    u.remove('gsi3pk').remove('gsi3sk');
  }
}

/** Every write to the job item increments the version and stamps `updatedAt`. */
export function bumpVersion(u: UpdateBuilder, now: Date): void {
  u.increment(['version'], 1).set('updatedAt', now.toISOString());
}

/** Condition: the status is one of `statuses`. */
export function statusIn(u: UpdateBuilder, statuses: readonly JobStatus[]): string {
  return `${u.path('status')} IN (${statuses.map((s) => u.value(s)).join(', ')})`;
}
