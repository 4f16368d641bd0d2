/**
 * What the job drivers of one chaos run share: the stack (which may be down while it is
 * restarted), the event log, fault counters, and the people's tallies.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import type { ArmedFault } from '../../local/lambda/types.ts';
import { localFunctionArn } from '../../local/stack.ts';
import { StackUnreachableError } from './clients.ts';
import type { EventLog } from './events.ts';
import { FAULT_KINDS, type FaultKind } from './faults.ts';
import type { SiteName } from './sites.ts';
import type { ChaosStack, StackHandle } from './stack-process.ts';

/** The ARN the worker kills are armed for: only RunStep reports the four points per step. */
export const RUN_STEP = localFunctionArn('RunStep');

/** A worker kill armed in the stack and not yet seen firing (re-armed after a restart). */
export interface ArmedWorkerFault {
  kind: Extract<FaultKind, `worker-kill:${string}`>;
  jobId: string;
  point: FaultPoint;
  stepIndex: number;
  /** An agent step's action (at `action-recorded`). */
  action?: number;
  fired: boolean;
  done: boolean;
}

/** The fault the stack's Lambda runner arms for a worker kill: SIGKILL RunStep's worker at the point. */
export function armedFault(a: ArmedWorkerFault): ArmedFault {
  return {
    functionName: RUN_STEP,
    point: a.point,
    match: { jobId: a.jobId, stepIndex: a.stepIndex, ...(a.action ? { action: a.action } : {}) },
  };
}

/** The stack stayed unreachable past a deadline. */
export class StackDownError extends Error {
  constructor(what: string) {
    super(`the stack did not answer in time for: ${what}`);
    this.name = 'StackDownError';
  }
}

export interface RunContext {
  stack: ChaosStack;
  events: EventLog;
  dataDir: string;
  /** A job not ended after this long (from its start) is stuck. */
  jobTimeoutMs: number;
  /** A job whose status, ledger and workers show nothing new for this long is stuck. */
  stallTimeoutMs: number;
  say(line: string): void;
  injected: Record<FaultKind, number>;
  humans: { approvals: number; reviews: number; mfaCodes: number };
  /** The username an account signs in as (a one-time code is read from the site's outbox by it). */
  usernameOf(accountId: string): string | undefined;
  armed: ArmedWorkerFault[];
  /** Sites whose request log must survive (a layout check is open): no stack kill meanwhile. */
  layoutWindows: Set<SiteName>;
  /** Aborted: jobs still running end as stuck, no new job starts. */
  signal?: AbortSignal;
  /** SIGKILLs the stack and starts it again; false when it could not happen now. */
  killStack(reason: string): Promise<boolean>;
}

export function emptyCounts(): Record<FaultKind, number> {
  return Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
}

/**
 * Runs `fn` against the current boot, waiting out a restart: an unreachable stack is tried
 * again every half second until `deadline` (epoch ms).
 */
export async function withStack<T>(
  ctx: Pick<RunContext, 'stack'>,
  what: string,
  deadline: number,
  fn: (h: StackHandle) => Promise<T>,
): Promise<T> {
  for (;;) {
    const h = ctx.stack.handle;
    if (h) {
      try {
        return await fn(h);
      } catch (err) {
        if (!unreachable(err)) throw err;
      }
    }
    if (Date.now() > deadline) throw new StackDownError(what);
    await sleep(500);
  }
}

/** The stack is down (our clients' error, or fetch's own from the sites' admin client). */
function unreachable(err: unknown): boolean {
  return (
    err instanceof StackUnreachableError ||
    (err instanceof TypeError && /fetch failed/.test(err.message)) ||
    (err instanceof Error && err.name === 'AbortError')
  );
}
