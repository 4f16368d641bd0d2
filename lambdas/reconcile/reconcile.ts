import { attachFor, stepContext } from '../lib/engine/context.ts';
import { hasOpenIntent } from '../lib/engine/history.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { type WaitRequest, waitRequest } from '../lib/engine/waits.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { Step } from '../lib/playbooks/contract.ts';

export type ReconcileResult =
  | { outcome: 'done' | 'absent'; step: string }
  | { outcome: 'unknown'; step: string; detail: string; wait: WaitRequest }
  | { outcome: 'session_lost'; step: string; app: string; detail: string }
  | { outcome: 'auth_expired'; step: string; app: string; detail: string }
  | { outcome: 'stopped'; status: string };

/**
 * A write whose outcome is unknown: look in the application itself (the step's probe).
 * `done` records the completion with the probe's evidence and never acts again; `absent`
 * records that the write did not happen, so RunStep may act again with the same
 * idempotency key; `unknown` goes to a person. Nothing is retried blindly.
 */
export async function reconcile(deps: EngineDeps, ref: JobRef): Promise<ReconcileResult> {
  const started = deps.clock().getTime();
  const { job, entries } = await deps.ledger.readJob(ref.tenantId, ref.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const playbook = deps.playbooks.get(job.playbook);
  if (job.nextStep >= playbook.steps.length)
    return { outcome: 'done', step: playbook.steps.at(-1)?.id ?? '' };
  const stepIndex = job.nextStep;
  const step = playbook.steps[stepIndex] as Step;
  if (step.kind !== 'write' || !step.probe || !hasOpenIntent(entries, step.id)) {
    // Nothing uncertain (a repeat after the answer was recorded): RunStep carries on.
    return { outcome: 'absent', step: step.id };
  }
  const attach = await attachFor(deps, job, step.app);
  if (!attach.ok) return { outcome: 'session_lost', step: step.id, app: step.app, detail: attach.detail };
  const page = attach.attached.page;
  const ctx = stepContext(deps, job, playbook, step, stepIndex);
  const sessionId = job.sessions[step.app]?.sessionId;

  const probe = await step.probe(page, ctx);
  if (probe.status === 'unknown') {
    const application = playbook.applications[step.app];
    if (application && (await application.isSignedOut(page).catch(() => false))) {
      return { outcome: 'auth_expired', step: step.id, app: step.app, detail: probe.detail };
    }
    return {
      outcome: 'unknown',
      step: step.id,
      detail: probe.detail,
      wait: waitRequest(job, 'review', step.id, 'unknown', deps.settings.parkAfterSeconds),
    };
  }
  if (probe.status === 'absent') {
    await deps.ledger.append(job.tenantId, job.jobId, {
      type: 'reconciled',
      step: step.id,
      stepIndex,
      sessionId,
      detail: { probe: 'absent', ...(probe.detail ? { note: probe.detail } : {}) },
      cost: { lambdaInvocations: 1, dynamoWrites: 2 },
    });
    return { outcome: 'absent', step: step.id };
  }
  const elapsedMs = deps.clock().getTime() - started;
  await deps.ledger.completeStep({
    tenantId: job.tenantId,
    jobId: job.jobId,
    expectedVersion: job.version,
    stepIndex,
    step: step.id,
    attempt: Math.max(1, entries.filter((e) => e.step === step.id && e.type === 'step-started').length),
    sessionId,
    idempotencyKey: ctx.idempotencyKey,
    evidence: { ...probe.evidence, reconciled: true },
    cost: { lambdaInvocations: 1, lambdaMs: elapsedMs, browserSeconds: elapsedMs / 1000, dynamoWrites: 2 },
  });
  return { outcome: 'done', step: step.id };
}
