import { evidenceSoFar } from '../lib/engine/history.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { isWaitKind, WAIT_ENTRY, WAIT_STATUS, WAIT_TIMEOUT_SECONDS } from '../lib/engine/waits.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';

export interface AwaitHumanInput extends JobRef {
  kind: string;
  step: string;
  reason: string;
  taskToken: string;
}

export type AwaitHumanResult =
  | { outcome: 'waiting'; kind: string; expiresAt: string }
  | { outcome: 'stopped'; status: string };

/**
 * Entry of a wait-for-task-token state: stores the token on the job (with the kind, the
 * step and the expiry) and tells the people who must act. The token never leaves the
 * backend: people answer through the API, which looks it up. A retried invocation re-arms
 * the wait with the new token.
 */
export async function awaitHuman(deps: EngineDeps, input: AwaitHumanInput): Promise<AwaitHumanResult> {
  if (!isWaitKind(input.kind)) throw new TypeError(`unknown wait kind ${input.kind}`);
  if (!input.taskToken) throw new TypeError('a task token is required');
  const { job, entries } = await deps.ledger.readJob(input.tenantId, input.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const playbook = deps.playbooks.get(job.playbook);
  const stepIndex = Math.max(
    0,
    playbook.steps.findIndex((s) => s.id === input.step),
  );
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + WAIT_TIMEOUT_SECONDS[input.kind] * 1000).toISOString();
  await deps.ledger.setWait(
    job.tenantId,
    job.jobId,
    {
      kind: input.kind,
      step: input.step,
      stepIndex,
      taskToken: input.taskToken,
      expiresAt,
      requestedAt: now.toISOString(),
      reason: input.reason,
    },
    WAIT_STATUS[input.kind],
    {
      type: WAIT_ENTRY[input.kind],
      step: input.step,
      stepIndex,
      detail: { reason: input.reason, expiresAt },
      cost: { lambdaInvocations: 1, dynamoWrites: 2, humanInterventions: 1 },
    },
  );
  await deps.notifier.waiting({
    tenantId: job.tenantId,
    jobId: job.jobId,
    kind: input.kind,
    step: input.step,
    reason: input.reason,
    expiresAt,
    evidence: evidenceSoFar(entries),
  });
  return { outcome: 'waiting', kind: input.kind, expiresAt };
}
