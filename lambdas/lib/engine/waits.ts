import type { JobStatus, WaitKind } from '../ledger/types.ts';

/** How long each kind of human wait lasts; the state machine's `TimeoutSeconds` (tested to match). */
export const WAIT_TIMEOUT_SECONDS: Readonly<Record<WaitKind, number>> = {
  approval: 604_800,
  mfa: 86_400,
  review: 604_800,
};

export const WAIT_STATUS: Readonly<Record<WaitKind, Extract<JobStatus, `WAITING_${string}`>>> = {
  approval: 'WAITING_APPROVAL',
  mfa: 'WAITING_MFA',
  review: 'WAITING_REVIEW',
};

export const WAIT_ENTRY = {
  approval: 'approval-requested',
  mfa: 'mfa-requested',
  review: 'review-requested',
} as const;

export function isWaitKind(value: unknown): value is WaitKind {
  return value === 'approval' || value === 'mfa' || value === 'review';
}
