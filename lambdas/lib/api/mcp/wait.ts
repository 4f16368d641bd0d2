import type { z } from 'zod';
import type { JobResponseSchema } from '../jobs/schemas.ts';
import { type BelayApi, expectJson, seg } from './api.ts';
import { isFinished, isWaiting } from './views.ts';

type JobResponse = z.infer<typeof JobResponseSchema>;
type JobView = JobResponse['job'];

/** What `wait_for_job` needs besides the API: the clock, a pause, and how it reports progress. */
export interface WaitDeps {
  api: BelayApi;
  now(): number;
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Between two looks at the job. */
  pollMs: number;
  /** The longest this server waits in one call, whatever the caller asks (the transport's limit). */
  maxWaitSeconds: number;
}

/** One step's progress: steps completed of the job's steps, with what the job is doing. */
export interface StepProgress {
  progress: number;
  total: number;
  message: string;
}

export type WaitOutcome = 'finished' | 'waiting_for_person' | 'timed_out' | 'cancelled_by_client';

export interface WaitResult {
  outcome: WaitOutcome;
  job: JobView;
  waitedSeconds: number;
  /** The caller asked for longer than this transport waits in one call. */
  cappedAtSeconds?: number;
}

/** The message of a progress notification: `step 3/14 Fill the address (RUNNING)`. */
export function progressMessage(job: JobView): string {
  if (isFinished(job.status)) return `${job.status} after ${job.stepsCompleted}/${job.stepCount} steps`;
  const at = job.step
    ? `step ${job.step.number}/${job.step.of} ${job.step.title || job.step.id}`
    : 'finishing';
  const wait = job.wait ? `, waiting for ${job.wait.kind} at ${job.wait.step}` : '';
  return `${at} (${job.status}${wait})`;
}

/**
 * Follows a job until it ends or waits for a person, for at most `timeoutSeconds` (and at most
 * the transport's `maxWaitSeconds`), reporting where it is and then each step it completes
 * through `progress` (steps completed of N, never going back). Reads the job through the API, as `get_job` does;
 * the caller's cancellation (`signal`) stops it at once.
 */
export async function waitForJob(
  deps: WaitDeps,
  jobId: string,
  timeoutSeconds: number,
  progress: (p: StepProgress) => Promise<void>,
  signal?: AbortSignal,
): Promise<WaitResult> {
  const started = deps.now();
  const seconds = Math.min(timeoutSeconds, deps.maxWaitSeconds);
  const deadline = started + seconds * 1000;
  let reported = -1;
  const result = (outcome: WaitOutcome, job: JobView): WaitResult => ({
    outcome,
    job,
    waitedSeconds: Math.round((deps.now() - started) / 100) / 10,
    ...(timeoutSeconds > deps.maxWaitSeconds ? { cappedAtSeconds: deps.maxWaitSeconds } : {}),
  });
  for (;;) {
    const { job } = expectJson<JobResponse>(await deps.api({ method: 'GET', path: `/jobs/${seg(jobId)}` }));
    // Progress only goes up (MCP): where the job is as the wait begins, then one notification per
    // step completed (steps completed between two looks each get theirs, the last with the news).
    if (job.stepsCompleted > reported) {
      for (let done = reported + 1; reported >= 0 && done < job.stepsCompleted; done++) {
        await progress({
          progress: done,
          total: job.stepCount,
          message: `${done}/${job.stepCount} steps completed`,
        });
      }
      reported = job.stepsCompleted;
      await progress({ progress: job.stepsCompleted, total: job.stepCount, message: progressMessage(job) });
    }
    if (isFinished(job.status)) return result('finished', job);
    if (isWaiting(job.status)) return result('waiting_for_person', job);
    if (signal?.aborted) return result('cancelled_by_client', job);
    const left = deadline - deps.now();
    if (left <= 0) return result('timed_out', job);
    await deps.sleep(Math.min(deps.pollMs, left), signal);
  }
}
