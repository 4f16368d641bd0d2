import { releaseJobResources } from '../lib/engine/cleanup.ts';
import { attachFor, stepContext } from '../lib/engine/context.ts';
import { OutcomeNotVerifiedError } from '../lib/engine/errors.ts';
import { probeWrite, signedOutNow } from '../lib/engine/probe.ts';
import { signInAgain } from '../lib/engine/sign-in.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import type { Evidence } from '../lib/ledger/types.ts';

export type FinishResult =
  | { outcome: 'succeeded'; verified: Record<string, Evidence> }
  | { outcome: 'session_lost'; app: string; detail: string }
  /** Signing in again to verify needs a person's one-time code: the state machine waits for it (AwaitMfa). */
  | { outcome: 'mfa_required'; app: string; step: string; detail: string }
  | { outcome: 'stopped'; status: string };

/**
 * Verifies the job's outcome in the target applications (every write step's probe must
 * find its effect), marks the job SUCCEEDED (a verified completion), then ends its sessions
 * (profiles persisted) and releases its leases. A repeat after a crash finds the job
 * SUCCEEDED and only finishes the clean-up.
 */
export async function finish(deps: EngineDeps, ref: JobRef): Promise<FinishResult> {
  const job = await deps.ledger.getJob(ref.tenantId, ref.jobId);
  if (job.status === 'SUCCEEDED' || job.status === 'FAILED' || job.status === 'CANCELLED') {
    await releaseJobResources(deps, job);
    return { outcome: 'stopped', status: job.status };
  }
  const playbook = deps.playbooks.get(job.playbook);
  if (job.nextStep < playbook.steps.length) {
    throw new OutcomeNotVerifiedError(
      playbook.steps[job.nextStep]?.id ?? '?',
      'the job has steps left to run',
    );
  }

  const verified: Record<string, Evidence> = {};
  for (const [index, step] of playbook.steps.entries()) {
    if (step.kind !== 'write' || !step.probe) continue;
    const attach = await attachFor(deps, job, step.app);
    if (!attach.ok) return { outcome: 'session_lost', app: step.app, detail: attach.detail };
    const page = attach.attached.page;
    const ctx = stepContext(deps, job, playbook, step, index);
    let probe = await probeWrite(step, page, ctx);
    if (probe.status === 'unknown' && (await signedOutNow(playbook.applications[step.app], page))) {
      // The sign-in expired since the step: sign in again (as RunStep does) and look again. A
      // code sent to a person makes the job wait for them, then come back here through RunStep.
      const signedIn = await signInAgain(
        deps,
        job,
        playbook,
        { step, stepIndex: index, page, ctx },
        { during: 'finish' },
      );
      if (signedIn.status === 'mfa_required')
        return { outcome: 'mfa_required', app: step.app, step: step.id, detail: signedIn.detail };
      probe = await probeWrite(step, page, ctx);
    }
    if (probe.status !== 'done') {
      throw new OutcomeNotVerifiedError(
        step.id,
        probe.status === 'unknown' ? probe.detail : 'not found (absent)',
      );
    }
    verified[step.id] = probe.evidence;
  }

  const done = await deps.ledger.transition(job.tenantId, job.jobId, 'SUCCEEDED', {
    expectedVersion: job.version,
    entry: {
      type: 'succeeded',
      detail: { verified },
      // Finish, FinishOutcome, Succeeded.
      cost: { lambdaInvocations: 1, stateTransitions: 3, dynamoWrites: 2 },
    },
  });
  await releaseJobResources(deps, done);
  return { outcome: 'succeeded', verified };
}
