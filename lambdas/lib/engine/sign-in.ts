import type { Page } from 'playwright-core';
import type { Cost, Job, LedgerEntry } from '../ledger/types.ts';
import type { Playbook, SignInResult, Step, StepContext } from '../playbooks/contract.ts';
import type { EngineDeps } from './types.ts';

/**
 * Sign-ins one step may need before it completes. An expired sign-in costs no retry, but a
 * site that signs the account out again at every attempt would loop (RunStep, sign in,
 * RunStep...) until the execution's history is full: past this many, the attempt counts as a
 * failure and spends the job's retry budget like any other.
 */
export const MAX_SIGN_INS_PER_STEP = 3;

/** `reauth` entries for `step` since the job last completed a step. */
export function signInsSinceProgress(entries: readonly LedgerEntry[], step: string): number {
  let count = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as LedgerEntry;
    if (entry.type === 'step-completed') break;
    if (entry.type === 'reauth' && entry.step === step) count++;
  }
  return count;
}

/**
 * Signs the account in again on `page` for `step`'s application and records it (`reauth`).
 * The application's sign-in handles an authenticator (TOTP) itself; a code sent to a person
 * comes back as `mfa_required`, recorded by the wait that follows.
 */
export async function signInAgain(
  deps: EngineDeps,
  job: Job,
  playbook: Playbook,
  at: { step: Step; stepIndex: number; page: Page; ctx: StepContext },
  record: { during?: 'finish'; cost?: Partial<Cost> } = {},
): Promise<SignInResult> {
  const { step, stepIndex, page, ctx } = at;
  const application = playbook.applications[step.app];
  if (!application) throw new TypeError(`playbook ${playbook.id} has no application ${step.app}`);
  const result = await application.signIn(page, ctx);
  if (result.status === 'mfa_required') return result;
  await deps.ledger.append(job.tenantId, job.jobId, {
    type: 'reauth',
    step: step.id,
    stepIndex,
    sessionId: job.sessions[step.app]?.sessionId,
    detail: { application: step.app, ...(record.during ? { during: record.during } : {}) },
    cost: { dynamoWrites: 2, ...record.cost },
  });
  return result;
}
