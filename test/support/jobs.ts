/** Jobs submitted and answered through the API's own functions, and waits on them with bounded timeouts and a diagnosis. */
import { decide } from '../../lambdas/lib/api/jobs/decide.ts';
import { completeMfa } from '../../lambdas/lib/api/jobs/mfa.ts';
import { submitJob } from '../../lambdas/lib/api/jobs/submit.ts';
import { executionNamePrefix } from '../../lambdas/lib/engine/executions.ts';
import {
  type Job,
  type JobStatus,
  type LedgerEntry,
  TERMINAL_STATUSES,
} from '../../lambdas/lib/ledger/index.ts';
import type { HistoryEvent } from '../../local/sfn/types.ts';
import type { LocalStack } from '../../local/stack.ts';
import type { CheckoutInputs } from '../../playbooks/checkout/index.ts';
import type { EngineStack, JobsClient } from './engine-stack.ts';
import { CHECKOUT_INPUTS, PERSON, SYNC_INPUTS, sleep, TENANT } from './fixtures.ts';

export interface SubmitOptions {
  jobId: string;
  account?: string;
  approvals?: string[];
  inputs?: CheckoutInputs;
  retryBudget?: number;
}

/** Submits a `checkout@1` job (through `submitJob`, which also starts its execution). */
export async function submitCheckout(engine: JobsClient, options: SubmitOptions): Promise<Job> {
  const { job } = await submitJob(
    engine.api,
    PERSON,
    {
      jobId: options.jobId,
      playbook: 'checkout@1',
      inputs: options.inputs ?? CHECKOUT_INPUTS,
      accounts: { shop: options.account ?? 'acct_demo_shop' },
      ...(options.approvals ? { approvals: options.approvals } : {}),
      ...(options.retryBudget !== undefined ? { retryBudget: options.retryBudget } : {}),
    },
    undefined,
  );
  return job;
}

/** Submits a `crm-billing-sync@1` job. */
export async function submitSync(engine: JobsClient, jobId: string): Promise<Job> {
  const { job } = await submitJob(
    engine.api,
    PERSON,
    {
      jobId,
      playbook: 'crm-billing-sync@1',
      inputs: SYNC_INPUTS,
      accounts: { crm: 'acct_demo_crm', billing: 'acct_demo_billing' },
    },
    undefined,
  );
  return job;
}

/**
 * Submits a `crm-contact-agent@1` job (its agent step sets the contact name and phone) on `model`,
 * or the same job of another playbook with these inputs (`crm-contact-decl@1`, its declarative form).
 */
export async function submitContactAgent(
  engine: JobsClient,
  options: {
    jobId: string;
    customerId: string;
    contactName: string;
    model: string;
    playbook?: string;
    phone?: string;
  },
): Promise<Job> {
  const { job } = await submitJob(
    engine.api,
    PERSON,
    {
      jobId: options.jobId,
      playbook: options.playbook ?? 'crm-contact-agent@1',
      inputs: {
        customerId: options.customerId,
        contactName: options.contactName,
        phone: options.phone ?? '+44 117 496 0999',
      },
      accounts: { crm: 'acct_demo_crm' },
      model: options.model,
    },
    undefined,
  );
  return job;
}

/** Approves (or, for a review, resolves) the step the job waits at, as a person through the API. */
export async function approve(
  engine: JobsClient,
  jobId: string,
  step: string,
  resolution?: 'done' | 'absent',
): Promise<void> {
  const result = await decide(engine.api, PERSON, jobId, {
    step,
    decision: 'approve',
    ...(resolution ? { resolution } : {}),
  });
  if (!result.resumed) throw new Error(`approving ${jobId} at ${step} resumed nothing`);
}

/** Sends a one-time code for the job's WAITING_MFA sign-in, as a person through the API. */
export async function sendCode(engine: JobsClient, jobId: string, code: string): Promise<void> {
  const result = await completeMfa(engine.api, PERSON, jobId, { code });
  if (!result.resumed) throw new Error(`the code for ${jobId} resumed nothing`);
}

export interface JobView {
  job: Job;
  entries: LedgerEntry[];
}

export type JobCondition = (view: JobView) => boolean;

export const statusIs =
  (...statuses: JobStatus[]): JobCondition =>
  ({ job }) =>
    statuses.includes(job.status);

export const waitingAt =
  (kind: 'approval' | 'mfa' | 'review', step: string): JobCondition =>
  ({ job }) =>
    job.wait?.kind === kind && job.wait.step === step;

export const reached =
  (nextStep: number): JobCondition =>
  ({ job }) =>
    job.nextStep >= nextStep;

/** Executions of the job (every generation), newest first. */
export function executionsOf(
  engine: Pick<EngineStack, 'stack'>,
  jobId: string,
): ReturnType<LocalStack['sfn']['listExecutions']> {
  const prefix = executionNamePrefix(TENANT, jobId);
  return engine.stack.sfn.listExecutions().filter((e) => e.name.startsWith(prefix));
}

/** The history of the job's newest execution. */
export function historyOf(engine: EngineStack, jobId: string): HistoryEvent[] {
  const latest = executionsOf(engine, jobId)[0];
  if (!latest) throw new Error(`job ${jobId} has no execution`);
  return engine.stack.sfn.getExecutionHistory(latest.executionArn);
}

/** What went on with a job, for a failure message: status, wait, last entries, executions and their errors. */
export async function diagnose(engine: JobsClient, jobId: string): Promise<string> {
  const lines: string[] = [];
  try {
    const { job, entries } = await engine.ledger.readJob(TENANT, jobId);
    lines.push(
      `job ${jobId}: ${job.status} nextStep=${job.nextStep} wait=${job.wait ? `${job.wait.kind}@${job.wait.step}` : '-'} retries=${job.retriesUsed}${job.failure ? ` failure=${JSON.stringify(job.failure)}` : ''}`,
    );
    for (const e of entries.slice(-20)) {
      lines.push(
        `  ${e.at} ${e.type} ${e.step ?? ''} ${JSON.stringify(e.detail ?? e.evidence ?? {}).slice(0, 240)}`,
      );
    }
  } catch (err) {
    lines.push(`job ${jobId}: cannot read the ledger: ${String(err)}`);
  }
  const { stack } = engine;
  if (!stack) return lines.join('\n');
  for (const x of executionsOf({ stack }, jobId)) {
    const d = stack.sfn.describeExecution(x.executionArn);
    lines.push(`  execution ${d.name}: ${d.status} ${d.error ?? ''} ${(d.cause ?? '').slice(0, 400)}`);
    const failures = stack.sfn
      .getExecutionHistory(x.executionArn)
      .filter((h) => h.lambdaFunctionFailedEventDetails || h.taskFailedEventDetails)
      .slice(-5);
    for (const h of failures) {
      const f = h.lambdaFunctionFailedEventDetails ?? h.taskFailedEventDetails;
      lines.push(`    ${h.type}: ${f?.error ?? ''} ${(f?.cause ?? '').slice(0, 300)}`);
    }
    const outputs = stack.sfn
      .getExecutionHistory(x.executionArn)
      .filter((h) => h.lambdaFunctionSucceededEventDetails)
      .slice(-4);
    for (const h of outputs) {
      lines.push(`    returned: ${(h.lambdaFunctionSucceededEventDetails?.output ?? '').slice(0, 300)}`);
    }
  }
  return lines.join('\n');
}

/**
 * Polls the ledger until `condition` holds. Throws (with a diagnosis) when `timeoutMs` runs
 * out, or when the job ends without the condition holding.
 */
export async function waitForJob(
  engine: JobsClient,
  jobId: string,
  condition: JobCondition,
  options: { timeoutMs?: number; what?: string; pollMs?: number } = {},
): Promise<JobView> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await engine.ledger.readJob(TENANT, jobId);
    if (condition(view)) return view;
    const ended = TERMINAL_STATUSES.includes(view.job.status);
    if (ended || Date.now() > deadline) {
      throw new Error(
        `${ended ? 'job ended' : `timed out after ${timeoutMs} ms`} waiting for ${options.what ?? 'the condition'}\n${await diagnose(engine, jobId)}`,
      );
    }
    await sleep(options.pollMs ?? 250);
  }
}

/**
 * Runs a job to its end: approves the waits at `approveSteps` as they come; any other wait
 * (or a failure) throws with a diagnosis. Resolves with the final view once the job is
 * SUCCEEDED and its execution closed.
 */
export async function runToSuccess(
  engine: EngineStack,
  jobId: string,
  options: { approveSteps?: readonly string[]; timeoutMs?: number } = {},
): Promise<JobView> {
  const approveSteps = options.approveSteps ?? ['place-order'];
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    const view = await waitForJob(
      engine,
      jobId,
      ({ job }) => job.status === 'SUCCEEDED' || job.wait !== undefined,
      { timeoutMs: Math.max(1_000, deadline - Date.now()), what: 'SUCCEEDED' },
    );
    const { job } = view;
    if (job.status === 'SUCCEEDED') {
      await waitForExecutionEnd(engine, jobId, Math.max(1_000, deadline - Date.now()));
      return engine.ledger.readJob(TENANT, jobId);
    }
    const wait = job.wait;
    if (wait?.kind === 'approval' && approveSteps.includes(wait.step)) {
      await approve(engine, jobId, wait.step);
      continue;
    }
    throw new Error(
      `job ${jobId} waits for ${wait?.kind} at ${wait?.step} (${wait?.reason ?? ''})\n${await diagnose(engine, jobId)}`,
    );
  }
}

/** Waits for the job's newest execution to close; returns its description. */
export async function waitForExecutionEnd(
  engine: EngineStack,
  jobId: string,
  timeoutMs = 60_000,
): Promise<ReturnType<LocalStack['sfn']['describeExecution']>> {
  const latest = executionsOf(engine, jobId)[0];
  if (!latest) throw new Error(`job ${jobId} has no execution`);
  return engine.stack.sfn.waitForExecution(latest.executionArn, timeoutMs);
}
