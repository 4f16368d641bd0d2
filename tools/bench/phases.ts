/**
 * RunStep's invocations split at the step's action, from the local Lambda runner's events: the
 * hand-off to the worker, the `before-action` and `after-action` fault points (RunStep reaches
 * them right before the step's own work and right after its verify), and the end. What lies
 * before the action is the job's read, the account check, the attach, the precondition and a
 * write's intent; what lies after is the screenshot, the checkpoint, the action cache and the
 * invocation's record; a new process's module load comes before the hand-off.
 */
import type {
  FaultPointEvent,
  InvocationEndedEvent,
  InvocationStartedEvent,
} from '../../local/lambda/events.ts';

/** Summed over a job's RunStep invocations, ms. */
export interface RunStepPhaseTotals {
  /** Invocation call to the worker's hand-off: a new process's module load, and the hand-off itself. */
  initMs: number;
  /** Hand-off to `before-action` (the whole invocation when it ran no action, e.g. one that asks for approval). */
  beforeActionMs: number;
  /** `before-action` to `after-action`: the step's run and verify, under the write guard for a write. */
  actionMs: number;
  /** `after-action` to the end of the invocation. */
  afterActionMs: number;
  /** RunStep invocations counted. */
  invocations: number;
  /**
   * The worker's CPU between `before-action` and `after-action`: the step's own run and verify
   * (the page's work driven from the process), ms. Only invocations whose points carried it.
   */
  actionCpuMs: number;
}

interface Open {
  startedAt: number;
  beforeAt?: number;
  afterAt?: number;
  beforeCpu?: number;
  afterCpu?: number;
}

/** RunStep's function name, as the local runner names it (`belay-run-step`). */
export const RUN_STEP = /run-step/;

/** Collects {@link RunStepPhaseTotals} from the runner's events, each given with the instant it was seen. */
export class RunStepPhases {
  readonly #open = new Map<string, Open>();
  readonly #totals: RunStepPhaseTotals = {
    initMs: 0,
    beforeActionMs: 0,
    actionMs: 0,
    afterActionMs: 0,
    invocations: 0,
    actionCpuMs: 0,
  };

  started(e: InvocationStartedEvent, at: number): void {
    if (RUN_STEP.test(e.functionName)) this.#open.set(e.requestId, { startedAt: at });
  }

  point(e: FaultPointEvent, at: number): void {
    const open = e.requestId === undefined ? undefined : this.#open.get(e.requestId);
    if (!open) return;
    if (e.point === 'before-action') {
      open.beforeAt ??= at;
      open.beforeCpu ??= e.cpuMs;
    } else if (e.point === 'after-action') {
      open.afterAt ??= at;
      open.afterCpu ??= e.cpuMs;
    }
  }

  ended(e: InvocationEndedEvent, at: number): void {
    const open = this.#open.get(e.requestId);
    if (!open) return;
    this.#open.delete(e.requestId);
    const t = this.#totals;
    t.invocations++;
    t.initMs += Math.max(0, e.durationMs - (at - open.startedAt));
    const actionFrom = open.beforeAt ?? at;
    const actionTo = open.beforeAt === undefined ? at : (open.afterAt ?? at);
    t.beforeActionMs += actionFrom - open.startedAt;
    t.actionMs += actionTo - actionFrom;
    t.afterActionMs += at - actionTo;
    if (open.beforeCpu !== undefined && open.afterCpu !== undefined)
      t.actionCpuMs += open.afterCpu - open.beforeCpu;
  }

  totals(): RunStepPhaseTotals {
    return { ...this.#totals };
  }
}
