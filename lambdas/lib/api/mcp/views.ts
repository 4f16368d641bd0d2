import type { z } from 'zod';
import { priceCost, RATES_AS_OF } from '../../cost/rates.ts';
import { AGENT_QUESTION_REASON } from '../../engine/waits.ts';
import { TERMINAL_STATUSES } from '../../ledger/types.ts';
import type { PlaybookView } from '../catalog/views.ts';
import type { JobView, LedgerEntryViewSchema } from '../jobs/schemas.ts';

/**
 * What the MCP tools answer: short, structured views built from the API's own answers (which
 * are already redacted for the caller's tenant), so an agent's context holds what it needs to
 * decide its next move and nothing it would have to skim.
 */

export type LedgerEntryView = z.infer<typeof LedgerEntryViewSchema>;

const round = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/** Resource URIs of a job. */
export function jobUris(jobId: string): { timeline: string } {
  return { timeline: `belay://jobs/${encodeURIComponent(jobId)}/timeline` };
}

/** The resource URI of a screenshot the API serves at `/jobs/{jobId}/screenshots/{name}`. */
export function screenshotUri(apiPath: string): string {
  return `belay://${apiPath.replace(/^\/+/, '')}`;
}

/** A playbook in a list: what it does and where it writes. */
export interface PlaybookBrief {
  id: string;
  description: string;
  applications: string[];
  steps: number;
  /** Steps with a side effect outside the browser. */
  writes: string[];
  /** Steps a person approves before they run. */
  approvals: string[];
}

export function playbookBrief(p: PlaybookView): PlaybookBrief {
  return {
    id: p.id,
    description: p.description,
    applications: p.applications,
    steps: p.steps.length,
    writes: p.steps.filter((s) => s.kind === 'write').map((s) => s.id),
    approvals: p.steps.filter((s) => s.needsApproval).map((s) => s.id),
  };
}

/** A playbook in full: its inputs as JSON Schema and each step, numbered. */
export function playbookDetail(p: PlaybookView): Record<string, unknown> {
  return {
    id: p.id,
    description: p.description,
    applications: p.applications,
    inputSchema: p.inputSchema,
    ...(p.exampleInputs === undefined ? {} : { exampleInputs: p.exampleInputs }),
    steps: p.steps.map((s, i) => ({
      n: i + 1,
      id: s.id,
      title: s.title,
      app: s.app,
      writes: s.kind === 'write',
      needsApproval: s.needsApproval,
    })),
    note: 'A job may ask for more approvals (submit_job approvals); a write step that cannot be confirmed goes to a person for review.',
  };
}

/** Who answers a wait, and how: people, except an agent step's question, which goes to its submitter. */
export interface WaitAnswer {
  /** Who is asked. */
  by: string;
  /** How they answer. */
  how: string[];
}

export function whoAnswers(kind: string, reason: string | undefined, jobId: string): WaitAnswer {
  const id = encodeURIComponent(jobId);
  if (kind === 'review' && reason === AGENT_QUESTION_REASON) {
    return {
      by: 'whoever submitted the job (the key that called submit_job), or a person with an approver key',
      how: [
        'answer_question (this MCP server, with the submitting key)',
        `POST /jobs/${id}/answers`,
        'the console inbox',
      ],
    };
  }
  if (kind === 'mfa') {
    return {
      by: 'the account holder, with the one-time code the application sent them',
      how: ['the console inbox', `POST /jobs/${id}/mfa`],
    };
  }
  if (kind === 'takeover') {
    return {
      by: 'a person with an approver key, acting in the live browser',
      how: ["the console's job page (live view), then Done", `POST /jobs/${id}/takeover`],
    };
  }
  return {
    by:
      kind === 'review'
        ? 'a person with an approver key, who checks the application'
        : 'a person with an approver key (never the key that submitted the job, when an agent answers)',
    how: ['the console inbox', `POST /jobs/${id}/decisions`],
  };
}

/** The question an agent step asked (its latest `ask_person` action at `step`), if any. */
export function agentQuestion(entries: readonly LedgerEntryView[], step: string): string | undefined {
  const asked = entries.findLast(
    (e) =>
      e.step === step &&
      e.type === 'action-chosen' &&
      (e.detail?.action as { name?: unknown } | undefined)?.name === 'ask_person',
  );
  const question = (asked?.detail?.action as { question?: unknown } | undefined)?.question;
  return typeof question === 'string' ? question : undefined;
}

/** Evidence of each verified step (its latest completion), by step id. */
export function evidenceSoFar(entries: readonly LedgerEntryView[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of entries) {
    if (e.type === 'step-completed' && e.step) {
      out[e.step] = e.evidence ?? (e.evidenceRef ? { stored: e.evidenceRef } : {});
    }
  }
  return out;
}

/** The latest screenshots of a job (at most `limit`), as resource URIs with why each was taken. */
export function latestScreenshots(
  entries: readonly LedgerEntryView[],
  limit = 5,
): { uri: string; step?: string; reason: string; at: string }[] {
  return entries
    .filter((e) => e.screenshot)
    .slice(-limit)
    .map((e) => ({
      uri: screenshotUri(e.screenshot?.url ?? ''),
      ...(e.step ? { step: e.step } : {}),
      reason: e.screenshot?.reason ?? '',
      at: e.at,
    }));
}

const WAITING = new Set(['WAITING_APPROVAL', 'WAITING_MFA', 'WAITING_REVIEW', 'WAITING_TAKEOVER']);

/** The job has ended (SUCCEEDED, FAILED, CANCELLED). */
export function isFinished(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/** The job waits for a person (or its submitter's answer). */
export function isWaiting(status: string): boolean {
  return WAITING.has(status);
}

/** A job in a list: status and where it is. */
export function jobBrief(job: JobView): Record<string, unknown> {
  return {
    jobId: job.jobId,
    playbook: job.playbook,
    status: job.status,
    progress: `${job.stepsCompleted}/${job.stepCount}`,
    ...(job.wait ? { waitingFor: `${job.wait.kind} at ${job.wait.step}` } : {}),
    createdAt: job.createdAt,
    ...(job.finishedAt ? { finishedAt: job.finishedAt } : {}),
  };
}

/**
 * A job as `get_job` and `wait_for_job` show it: status, step n of N, the pending wait and who
 * may answer it, evidence of the verified steps, screenshots, cost (counters and dollars).
 * `entries` (its ledger) adds evidence, the agent's question and screenshots.
 */
export function jobSummary(job: JobView, entries?: readonly LedgerEntryView[]): Record<string, unknown> {
  const priced = priceCost(job.cost);
  const question = job.wait && entries ? agentQuestion(entries, job.wait.step) : undefined;
  return {
    jobId: job.jobId,
    playbook: job.playbook,
    status: job.status,
    step: job.step
      ? { number: job.step.number, of: job.step.of, id: job.step.id, title: job.step.title }
      : null,
    stepsCompleted: job.stepsCompleted,
    stepCount: job.stepCount,
    wait: job.wait
      ? {
          kind: job.wait.kind,
          step: job.wait.step,
          ...(job.wait.stepTitle ? { stepTitle: job.wait.stepTitle } : {}),
          ...(job.wait.reason ? { reason: job.wait.reason } : {}),
          ...(question ? { question } : {}),
          requestedAt: job.wait.requestedAt,
          expiresAt: job.wait.expiresAt,
          answeredBy: whoAnswers(job.wait.kind, job.wait.reason, job.jobId),
        }
      : null,
    ...(job.queue ? { queue: job.queue } : {}),
    ...(entries ? { evidence: evidenceSoFar(entries), screenshots: latestScreenshots(entries) } : {}),
    cost: {
      // Priced as the cost report prices it; people's part is an internal estimate, shown apart.
      usd: round(priced.total),
      usdOfPeople: round(priced.humanInterventions),
      ratesAsOf: RATES_AS_OF,
      browserSeconds: job.cost.browserSeconds,
      modelTokens: job.cost.modelTokens,
      stateTransitions: job.cost.stateTransitions,
      lambdaInvocations: job.cost.lambdaInvocations,
      humanInterventions: job.cost.humanInterventions,
    },
    retriesUsed: job.retriesUsed,
    ...(job.failure ? { failure: job.failure } : {}),
    ...(job.submittedBy ? { submittedBy: job.submittedBy } : {}),
    createdAt: job.createdAt,
    ...(job.finishedAt ? { finishedAt: job.finishedAt } : {}),
    resources: jobUris(job.jobId),
  };
}
