import {
  type AgentCounters,
  agentCountersByStep,
  type StepAgentCounters,
  sumAgentCounters,
} from '../../agent/counters.ts';
import { sealedOf } from '../../engine/effect-approval.ts';
import type { Job, LedgerEntry } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import { redact, redactText } from '../../redact.ts';
import { screenshotPath } from '../evidence/screenshots.ts';
import type { EffectView, JobView } from './schemas.ts';

/**
 * What the API shows of a job and its ledger. The task token of a pending wait never
 * appears; inputs, failures and entry details are redacted (cost is not: its counters are
 * not secrets, though a key like `modelTokens` would look like one to the redactor).
 */

/** Looks a playbook up by id, or `undefined` (a job of a retired playbook still has a view). */
export type PlaybookLookup = (id: string) => Playbook | undefined;

export function toJobView(job: Job, playbook: Playbook | undefined): JobView {
  const stepAt = (index: number): { id: string; title: string } | undefined => {
    const step = playbook?.steps[index];
    return step ? { id: step.id, title: step.title } : undefined;
  };
  const current = job.nextStep < job.stepCount ? stepAt(job.nextStep) : undefined;
  const sessions: JobView['sessions'] = {};
  for (const [app, ref] of Object.entries(job.sessions ?? {})) {
    sessions[app] = {
      sessionId: ref.sessionId,
      openedAt: ref.openedAt,
      ...(ref.endedAt ? { endedAt: ref.endedAt } : {}),
      ...(ref.identityId ? { identityId: ref.identityId } : {}),
    };
  }
  const view: JobView = {
    jobId: job.jobId,
    playbook: job.playbook,
    status: job.status,
    step:
      job.nextStep < job.stepCount
        ? {
            number: job.nextStep + 1,
            of: job.stepCount,
            id: current?.id ?? `step-${job.nextStep + 1}`,
            title: current?.title ?? '',
          }
        : null,
    stepsCompleted: job.nextStep,
    stepCount: job.stepCount,
    wait: job.wait
      ? {
          kind: job.wait.kind,
          step: job.wait.step,
          requestedAt: job.wait.requestedAt,
          expiresAt: job.wait.expiresAt,
          ...(job.wait.reason ? { reason: job.wait.reason } : {}),
          ...(stepAt(job.wait.stepIndex)?.id === job.wait.step
            ? { stepTitle: stepAt(job.wait.stepIndex)?.title ?? '' }
            : {}),
        }
      : null,
    inputs: redact(job.inputs),
    accounts: { ...job.accounts },
    approvals: [...job.approvals],
    retryBudget: job.retryBudget,
    retriesUsed: job.retriesUsed,
    sessions,
    cost: { ...job.cost },
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
  if (job.deadline) view.deadline = job.deadline;
  if (job.model) view.model = job.model;
  if (job.mode) view.mode = job.mode;
  if (job.failure) view.failure = { reason: job.failure.reason, message: redactText(job.failure.message) };
  if (job.submittedBy) view.submittedBy = job.submittedBy;
  if (job.startedAt) view.startedAt = job.startedAt;
  if (job.finishedAt) view.finishedAt = job.finishedAt;
  return view;
}

/** A ledger entry as the audit trail shows it (tenant and job left out: they are the URL's). */
export function toEntryView(entry: LedgerEntry): Record<string, unknown> {
  // The chain's salt never leaves: with a receipt's digest of a redacted value it would let the value be guessed.
  const { tenantId: _t, jobId: _j, hashSalt: _s, evidence, detail, cost, screenshot, ...rest } = entry;
  const view: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined) view[key] = typeof value === 'string' ? redactText(value) : value;
  }
  if (evidence !== undefined) view.evidence = redact(evidence);
  if (detail !== undefined) view.detail = redact(detail);
  if (screenshot !== undefined)
    view.screenshot = { ...screenshot, url: screenshotPath(entry.jobId, screenshot) };
  view.cost = { ...cost };
  return view;
}

/** Links of a job, relative to the API's base URL (empty for relative links). */
export function jobLinks(
  baseUrl: string,
  jobId: string,
): Record<'self' | 'ledger' | 'decisions' | 'mfa' | 'cancel', string> {
  const self = `${baseUrl.replace(/\/+$/, '')}/jobs/${encodeURIComponent(jobId)}`;
  return {
    self,
    ledger: `${self}/ledger`,
    decisions: `${self}/decisions`,
    mfa: `${self}/mfa`,
    cancel: `${self}/cancel`,
  };
}

/**
 * An agent job's counters, from its ledger: per agent step (model calls, actions the action
 * cache served in the record the step verified with, heals, cached actions of failed attempts,
 * model tokens as `usage`, model dollars, and whether the cache hit) and their total. None for
 * a job without agent steps.
 */
export function agentView(
  entries: readonly LedgerEntry[],
): { steps: Record<string, StepAgentCounters>; total: AgentCounters } | undefined {
  const steps = agentCountersByStep(entries);
  if (Object.keys(steps).length === 0) return undefined;
  return { steps, total: sumAgentCounters(Object.values(steps)) };
}

/**
 * What a write approved on its effect would submit, as the approver is shown it: the latest
 * effect prepared for `step` (values redacted for people; the hash is of what the page holds),
 * and when it was asked again, what changed since the approval before.
 */
export function effectView(entries: readonly LedgerEntry[], step: string): EffectView | undefined {
  const entry = entries.findLast(
    (e) => e.step === step && (e.type === 'effect-prepared' || e.type === 'effect-changed'),
  );
  if (!entry) return undefined;
  const { effect, hash } = sealedOf(entry);
  const changes = entry.detail?.changes as EffectView['changes'];
  return {
    hash,
    fields: redact(effect.fields),
    ...(changes ? { changes: redact(changes) } : {}),
    ...(typeof entry.detail?.approvedBy === 'string' ? { approvedBy: entry.detail.approvedBy } : {}),
    ...(entry.screenshot ? { screenshot: screenshotPath(entry.jobId, entry.screenshot) } : {}),
  };
}
