import { setTimeout as sleep } from 'node:timers/promises';
import cliProgress from 'cli-progress';
import type { EffectView } from '../../../lambdas/lib/api/jobs/schemas.ts';
import { priceCost } from '../../../lambdas/lib/cost/rates.ts';
import type { Cost } from '../../../lambdas/lib/ledger/types.ts';
import type { BelayClient } from './client.ts';
import { EXIT } from './errors.ts';
import type { Io } from './io.ts';

/** A job as `GET /jobs/{id}` shows it (the fields the CLI reads). */
export interface JobView {
  jobId: string;
  playbook: string;
  status: string;
  step: { number: number; of: number; id: string; title: string } | null;
  stepsCompleted: number;
  stepCount: number;
  wait: {
    kind: string;
    step: string;
    expiresAt: string;
    reason?: string;
    stepTitle?: string;
    /** A write approved on its effect: what it would submit (the API's `Effect`). */
    effect?: EffectView;
  } | null;
  cost: Cost;
  failure?: { reason: string; message: string };
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export function dollars(cost: Cost): string {
  return `$${priceCost(cost).total.toFixed(4)}`;
}

/** What the job does or waits for, in a few words. */
export function doing(job: JobView): string {
  if (job.wait)
    return `waits for ${job.wait.kind === 'mfa' ? 'a one-time code' : job.wait.kind} at ${job.wait.step}`;
  if (job.failure) return `${job.failure.reason}: ${job.failure.message}`;
  if (job.step) return `${job.step.id}${job.step.title ? ` (${job.step.title})` : ''}`;
  return job.status === 'SUCCEEDED' ? 'done' : '';
}

/** The command that answers a wait, for the message `--wait` ends with. */
export function answerHint(job: JobView): string {
  if (!job.wait) return '';
  if (job.wait.kind === 'mfa') return `belay mfa ${job.jobId} <code>`;
  if (job.wait.kind === 'takeover')
    return `open the job's page in the console, act in its live browser, then press Done (POST /jobs/${job.jobId}/takeover)`;
  return `belay approve ${job.jobId}   (or: belay reject ${job.jobId} --comment "...")`;
}

/** The exit code a watched job ends the command with. */
export function exitFor(job: JobView): number {
  if (job.status === 'SUCCEEDED') return EXIT.ok;
  if (TERMINAL.has(job.status)) return EXIT.jobFailed;
  return EXIT.waiting;
}

/**
 * Follows a job until it ends (or, with `untilWaiting`, until it waits for a person): a live
 * progress bar on a terminal (step n/N, what it does or waits for, cost so far), one line per
 * change otherwise. Resolves with the last view.
 */
export async function follow(
  client: BelayClient,
  jobId: string,
  io: Io,
  options: { untilWaiting: boolean; pollMs?: number; quiet?: boolean },
): Promise<JobView> {
  const path = `/jobs/${encodeURIComponent(jobId)}`;
  const tty = io.isTTY && !options.quiet;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          format: ' {bar} step {value}/{total} | {status} | {doing} | {cost}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let last = '';
  let started = false;
  try {
    for (;;) {
      const { job } = await client.request<{ job: JobView }>('GET', path);
      const payload = { status: job.status, doing: doing(job), cost: dollars(job.cost) };
      if (bar) {
        if (!started) bar.start(job.stepCount, job.stepsCompleted, payload);
        else bar.update(job.stepsCompleted, payload);
        started = true;
      } else if (!options.quiet) {
        const line = `step ${job.stepsCompleted}/${job.stepCount} | ${payload.status} | ${payload.doing} | ${payload.cost}`;
        if (line !== last) io.err(line);
        last = line;
      }
      if (TERMINAL.has(job.status) || (options.untilWaiting && job.wait)) return job;
      await sleep(options.pollMs ?? 1000);
    }
  } finally {
    bar?.stop();
  }
}
