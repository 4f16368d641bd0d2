import { attachFor, stepContext } from '../lib/engine/context.ts';
import { signInAgain } from '../lib/engine/sign-in.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { Step } from '../lib/playbooks/contract.ts';

export type ReauthenticateResult =
  | { outcome: 'reauthenticated'; step: string; app: string }
  | { outcome: 'mfa_required'; step: string; app: string; detail: string }
  | { outcome: 'session_lost'; step: string; app: string; detail: string }
  | { outcome: 'stopped'; status: string };

/**
 * Signs the account in again in the job's session for the step's application. The
 * application's sign-in handles an authenticator (TOTP) itself; a code sent to a person
 * (SMS, email) makes the job wait for them (`mfa_required`).
 */
export async function reauthenticate(
  deps: EngineDeps,
  ref: JobRef & { last?: { outcome?: string; app?: string; step?: string } },
): Promise<ReauthenticateResult> {
  const job = await deps.ledger.getJob(ref.tenantId, ref.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const playbook = deps.playbooks.get(job.playbook);
  // The step whose application signed out: the one RunStep named, else the next step.
  const named =
    ref.last?.outcome === 'auth_expired' ? playbook.steps.findIndex((s) => s.id === ref.last?.step) : -1;
  const stepIndex = named >= 0 ? named : Math.min(job.nextStep, playbook.steps.length - 1);
  const step = playbook.steps[stepIndex] as Step;

  const attach = await attachFor(deps, job, step.app);
  if (!attach.ok) return { outcome: 'session_lost', step: step.id, app: step.app, detail: attach.detail };
  // Signing in needs no earlier evidence, and Reauthenticate reads the job item alone.
  const ctx = stepContext(deps, job, playbook, step, stepIndex, []);
  const result = await signInAgain(
    deps,
    job,
    playbook,
    { step, stepIndex, page: attach.attached.page, ctx },
    { cost: { lambdaInvocations: 1 } },
  );
  if (result.status === 'mfa_required') {
    return { outcome: 'mfa_required', step: step.id, app: step.app, detail: result.detail };
  }
  return { outcome: 'reauthenticated', step: step.id, app: step.app };
}
