import { applyCancel } from '../lib/engine/cancel.ts';
import { attachFor, browserLost, stepContext } from '../lib/engine/context.ts';
import { hasOpenIntent } from '../lib/engine/history.ts';
import { type Resolution, resolveOpenIntent, signedOutNow } from '../lib/engine/probe.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { type WaitRequest, waitRequest } from '../lib/engine/waits.ts';
import { takeScreenshot } from '../lib/evidence/take.ts';
import { type ScreenshotRef, TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { Step } from '../lib/playbooks/contract.ts';

export type ReconcileResult =
  | { outcome: 'done' | 'absent'; step: string }
  | { outcome: 'unknown'; step: string; detail: string; wait: WaitRequest; screenshot?: ScreenshotRef }
  | { outcome: 'session_lost'; step: string; app: string; detail: string }
  | { outcome: 'auth_expired'; step: string; app: string; detail: string }
  /** Cancelled while the write was in flight, now settled: Finish cleans up. */
  | { outcome: 'cancelled'; step: string }
  /** The write's owner may still be running: RunStep (the default branch) waits for it. */
  | { outcome: 'owner_active'; step: string }
  | { outcome: 'stopped'; status: string };

/**
 * A write whose outcome is unknown: look in the application itself (the step's probe, through
 * `resolveOpenIntent`). `done` records the completion with the probe's evidence and never acts
 * again; `absent` records that the write did not happen, so RunStep may act again with the
 * same idempotency key; `unknown` goes to a person. Nothing is retried blindly.
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
  const ctx = stepContext(deps, job, playbook, step, stepIndex, entries);
  let resolved: Resolution;
  try {
    resolved = await resolveOpenIntent(deps, {
      job,
      entries,
      playbook,
      stepIndex,
      page,
      ctx,
      sessionId: job.sessions[step.app]?.sessionId,
      identityId: job.sessions[step.app]?.identityId,
      startedMs: started,
      endsInvocation: true,
    });
  } catch (err) {
    // The browser died while the probe looked: a new session from the profile, then look again.
    if (!browserLost(attach.attached, err)) throw err;
    await deps.browser.detach(attach.attached.sessionId).catch(() => undefined);
    return {
      outcome: 'session_lost',
      step: step.id,
      app: step.app,
      detail: err instanceof Error ? err.message : String(err),
    };
  }
  if ((resolved.status === 'done' || resolved.status === 'absent') && job.cancelRequested) {
    // The resolution carries the job as its own write left it: no second read.
    await applyCancel(deps, resolved.job, `the write was ${resolved.status}`);
    return { outcome: 'cancelled', step: step.id };
  }
  if (resolved.status === 'done' || resolved.status === 'absent' || resolved.status === 'owner_active')
    return { outcome: resolved.status, step: step.id };
  if (resolved.status === 'duplicate') {
    return {
      outcome: 'unknown',
      step: step.id,
      detail: resolved.detail,
      wait: waitRequest(job, 'review', step.id, 'duplicate', deps.settings.parkAfterSeconds),
    };
  }
  if (await signedOutNow(playbook.applications[step.app], page, ctx)) {
    return { outcome: 'auth_expired', step: step.id, app: step.app, detail: resolved.detail };
  }
  // The reviewer sees the page the probe looked at.
  const screenshot = await takeScreenshot(deps, page, { ...job, playbook, step, stepIndex }, 'before-review');
  return {
    outcome: 'unknown',
    step: step.id,
    detail: resolved.detail,
    wait: waitRequest(job, 'review', step.id, 'unknown', deps.settings.parkAfterSeconds),
    ...(screenshot ? { screenshot } : {}),
  };
}
