/**
 * What the sections of one benchmark run share: the warm and cold local stacks (started on
 * first use, stopped at the end), the clean warm Belay runs (measured once, read by the
 * recovery, overhead and cost sections), job ids, and progress lines on stderr.
 */
import { rm } from 'node:fs/promises';
import type {
  FaultPointEvent,
  InvocationEndedEvent,
  InvocationStartedEvent,
} from '../../local/lambda/events.ts';
import type { LambdaRuntime } from '../../local/lambda/types.ts';
import { loadTestShopAccountId } from '../../local/seed.ts';
import type { HistoryEvent } from '../../local/sfn/index.ts';
import { type BelayRun, type BenchJob, type BenchStack, runBelayJob, startBenchStack } from './belay.ts';
import { RUN_STEP, RunStepPhases, type RunStepPhaseTotals } from './phases.ts';
import { type LoadAverage, loadAverage } from './report.ts';
import type { CleanJobs } from './wall-ratio.ts';

/** What one function's invocations used in their workers during a run (`invocation-ended` events). */
export interface FunctionUsage {
  /** Invocations that answered (a killed one reports nothing). */
  invocations: number;
  /** Their processes' CPU time, user + system, ms. */
  cpuMs: number;
  /** Their AWS calls (each attempt), by `<client>.<command>`, e.g. `DynamoDB.Query`. */
  awsCalls: Record<string, number>;
}

/** One RunStep invocation as the benchmark saw it. */
export interface RunStepInvocation {
  /** The step's index (0-based), from its fault points; absent when it ran no step's action. */
  stepIndex?: number;
  awsCalls: Record<string, number>;
}

/** A Belay run measured alone on its stack, with what the Lambda runner saw meanwhile. */
export interface MeasuredRun extends BelayRun {
  /** Invocations the local Lambda runner served during the job (the job ran alone). */
  runnerInvocations: number;
  /** Their summed duration, ms (cold starts included). */
  runnerLambdaMs: number;
  /** The same by function (`start`, `run-step`, `finish`...), ms. */
  lambdaMsByFunction: Record<string, number>;
  /** Of them, those that started a new process. */
  coldStarts: number;
  /** RunStep's invocations split at the step's action (module load, before, the action, after). */
  runStepPhases: RunStepPhaseTotals;
  /** CPU and AWS calls by function (`run-step`, `start`, `finish`...). */
  usageByFunction: Record<string, FunctionUsage>;
  /** Each RunStep invocation that answered: the step it ran (none for a relay or a wait asked before acting) and its AWS calls. */
  runStepInvocations: RunStepInvocation[];
  /** Load average when the run started and ended. */
  load: { start: LoadAverage; end: LoadAverage };
  /** With a crash: what the recovery took, from the kill to the re-run of the step. */
  recovery?: RecoveryTimeline;
}

/** From the SIGKILL of the RunStep worker to the end of the step's re-run. */
export interface RecoveryTimeline {
  /** Kill -> the next RunStep invocation handed to a worker (the state machine's pause + new process + module load), ms. */
  restartMs: number;
  /** Module load of the worker that took the retry, ms (a live worker's was at its own start). */
  initMs: number;
  /** The retry started a new process (no idle worker was there to take it). */
  newProcess?: boolean;
  /** The re-run RunStep invocation once handed to its worker (reattach, precondition, step 12 again, checkpoint), ms. */
  rerunMs: number;
  /**
   * Of `restartMs`: the state machine's pause, from the execution history (the failed
   * invocation's event to the next one scheduled): none when the death is caught (`WorkerDied`),
   * a Retry's jittered backoff otherwise. Absent when the history showed no such pair.
   */
  pauseMs?: number;
}

/** History events of a Task's invocation that failed (the retry follows), and of one being scheduled. */
const FAILED_EVENTS: ReadonlySet<string> = new Set([
  'LambdaFunctionFailed',
  'LambdaFunctionTimedOut',
  'TaskFailed',
  'TaskTimedOut',
]);
const SCHEDULED_EVENTS: ReadonlySet<string> = new Set(['LambdaFunctionScheduled', 'TaskScheduled']);

/** Per-job timeout of the sequential runs. */
export const JOB_TIMEOUT_MS = 10 * 60_000;

export class BenchContext {
  readonly runs: number;
  readonly browserRuns: number;
  readonly dataDir: string;
  readonly log: (line: string) => void;
  /** Every job's progress lines on stderr too. */
  readonly verbose: boolean;
  /** Clean checkout@1 runs on the warm stack (recovery's clean Belay runs are these). */
  readonly cleanWarm: MeasuredRun[] = [];
  /** Clean job times of the naive runner and Belay by the shop's speed, as the recovery section measured them. */
  readonly cleanJobs = new Map<string, CleanJobs>();
  /** Every process the stacks started (DynamoDB Local, workers, Chromium): all must be gone at the end. */
  readonly pids = new Set<number>();
  readonly #stacks = new Map<'warm' | 'cold', BenchStack>();
  readonly #runId = new Date().toISOString().replace(/\D/g, '').slice(2, 14);
  #seq = 0;

  /** Added to the stacks' function environment (the agent section's model provider). */
  readonly stackEnv: Record<string, string>;
  /** The Node the stacks' functions run on (`runtimes.ts`). */
  readonly lambdaRuntime: LambdaRuntime;

  constructor(options: {
    stackEnv?: Record<string, string>;
    lambdaRuntime?: LambdaRuntime;
    runs: number;
    browserRuns: number;
    dataDir: string;
    log: (line: string) => void;
    verbose?: boolean;
  }) {
    this.verbose = options.verbose ?? false;
    this.stackEnv = options.stackEnv ?? {};
    this.lambdaRuntime = options.lambdaRuntime ?? {};
    this.runs = options.runs;
    this.browserRuns = options.browserRuns;
    this.dataDir = options.dataDir;
    this.log = options.log;
  }

  /** A job id unique in this run, e.g. `bench-clean-2506061200-3`. */
  jobId(kind: string): string {
    this.#seq += 1;
    return `bench-${kind}-${this.#runId}-${this.#seq}`;
  }

  /**
   * The shop account the measured sequential runs of `mode` use. Its browser profile keeps the
   * shop's sign-in from one run to the next, so the stack's first (uncounted) job signs it in
   * and every measured run starts from the same state: none pays a sign-in the others do not.
   */
  measuredAccount(mode: 'warm' | 'cold'): string {
    return loadTestShopAccountId(mode === 'warm' ? 2 : 4);
  }

  /**
   * The stack of `mode`, started on first use, then one uncounted job on the measured account
   * (it signs the account in; on the warm stack it also starts one worker per function).
   */
  async stack(mode: 'warm' | 'cold'): Promise<BenchStack> {
    const existing = this.#stacks.get(mode);
    if (existing) return existing;
    this.log(`starting the ${mode} local stack (lambdaMode '${mode}', browser cap 5)`);
    const b = await startBenchStack({
      dataDir: this.dataDir,
      mode,
      log: this.log,
      env: this.stackEnv,
      lambdaRuntime: this.lambdaRuntime,
    });
    this.#stacks.set(mode, b);
    this.pids.add(b.stack.dynamodb.pid);
    b.stack.lambdas.events.on('worker-spawned', (e) => this.pids.add(e.pid));
    this.log(
      mode === 'warm'
        ? 'warm-up job (not counted): signs the measured account in, starts one worker per function'
        : 'first job (not counted): signs the measured account in',
    );
    const run = await runBelayJob(b, {
      jobId: this.jobId('warmup'),
      accountId: this.measuredAccount(mode),
      timeoutMs: JOB_TIMEOUT_MS,
      ...(this.verbose ? { progress: this.log } : {}),
    });
    if (run.status !== 'SUCCEEDED')
      throw new Error(`the warm-up job ended ${run.status}${run.failure ? ` (${run.failure})` : ''}`);
    this.log(`warm-up job done in ${(run.wallMs / 1000).toFixed(1)} s`);
    return b;
  }

  /** One clean (or crashed) checkout, measured alone on the stack of `mode`. */
  async measuredRun(
    mode: 'warm' | 'cold',
    options: { kind: string; accountId: string; crashAtStep?: number; job?: BenchJob },
  ): Promise<MeasuredRun> {
    const b = await this.stack(mode);
    const loadStart = loadAverage();
    let invocations = 0;
    let lambdaMs = 0;
    const byFunction: Record<string, number> = {};
    let cold = 0;
    let killedAt: number | undefined;
    let rerun: { requestId: string; startedAt: number; initMs: number; newProcess: boolean } | undefined;
    let recovery: RecoveryTimeline | undefined;
    const phases = new RunStepPhases();
    const onStarted = (e: InvocationStartedEvent): void => {
      phases.started(e, performance.now());
      if (e.cold) cold++;
      if (killedAt !== undefined && !rerun && RUN_STEP.test(e.functionName))
        rerun = {
          requestId: e.requestId,
          startedAt: performance.now(),
          initMs: e.initMs ?? 0,
          newProcess: e.cold,
        };
    };
    const usageByFunction: Record<string, FunctionUsage> = {};
    const onEnded = (e: InvocationEndedEvent): void => {
      phases.ended(e, performance.now());
      invocations++;
      lambdaMs += e.durationMs;
      const fn = e.functionName.replace(/^belay-/, '');
      byFunction[fn] = (byFunction[fn] ?? 0) + e.durationMs;
      if (e.usage && RUN_STEP.test(e.functionName)) {
        const stepIndex = stepOf.get(e.requestId);
        runStepInvocations.push({
          ...(stepIndex === undefined ? {} : { stepIndex }),
          awsCalls: e.usage.awsCalls,
        });
      }
      stepOf.delete(e.requestId);
      if (e.usage) {
        const u = usageByFunction[fn] ?? { invocations: 0, cpuMs: 0, awsCalls: {} };
        usageByFunction[fn] = u;
        u.invocations++;
        u.cpuMs += e.usage.cpuMs;
        for (const [call, n] of Object.entries(e.usage.awsCalls))
          u.awsCalls[call] = (u.awsCalls[call] ?? 0) + n;
      }
      if (rerun && !recovery && e.requestId === rerun.requestId && killedAt !== undefined) {
        const rerunMs = performance.now() - rerun.startedAt;
        recovery = {
          restartMs: rerun.startedAt - killedAt,
          initMs: rerun.initMs,
          newProcess: rerun.newProcess,
          rerunMs,
          ...(failedAt !== undefined && retriedAt !== undefined ? { pauseMs: retriedAt - failedAt } : {}),
        };
      }
    };
    const onFault = (): void => {
      killedAt ??= performance.now();
    };
    const stepOf = new Map<string, number>();
    const runStepInvocations: RunStepInvocation[] = [];
    const onPoint = (e: FaultPointEvent): void => {
      phases.point(e, performance.now());
      if (e.requestId !== undefined && e.info.stepIndex !== undefined && RUN_STEP.test(e.functionName))
        stepOf.set(e.requestId, e.info.stepIndex);
    };
    // The killed invocation's failure in the history, then its re-run scheduled.
    let failedAt: number | undefined;
    let retriedAt: number | undefined;
    const onHistory = (e: HistoryEvent): void => {
      if (killedAt === undefined || retriedAt !== undefined) return;
      if (failedAt === undefined && FAILED_EVENTS.has(e.type)) failedAt = e.timestamp.getTime();
      else if (failedAt !== undefined && SCHEDULED_EVENTS.has(e.type)) retriedAt = e.timestamp.getTime();
    };
    b.stack.lambdas.events.on('invocation-started', onStarted);
    b.stack.lambdas.events.on('invocation-ended', onEnded);
    b.stack.lambdas.events.on('fault-fired', onFault);
    b.stack.lambdas.events.on('fault-point', onPoint);
    b.events.on('history', onHistory);
    try {
      const run = await runBelayJob(b, {
        jobId: this.jobId(options.kind),
        accountId: options.accountId,
        timeoutMs: JOB_TIMEOUT_MS,
        ...(this.verbose ? { progress: this.log } : {}),
        ...(options.crashAtStep ? { crashAtStep: options.crashAtStep } : {}),
        ...(options.job ? { job: options.job } : {}),
      });
      if (run.status !== 'SUCCEEDED')
        throw new Error(`${run.jobId} ended ${run.status}${run.failure ? ` (${run.failure})` : ''}`);
      if (!options.job && run.ordersPlaced !== 1)
        throw new Error(`${run.jobId} placed ${run.ordersPlaced} orders, not 1`);
      if (options.crashAtStep && run.crashes !== 1)
        throw new Error(`${run.jobId}: the armed fault fired ${run.crashes} times`);
      return {
        ...run,
        runnerInvocations: invocations,
        runnerLambdaMs: lambdaMs,
        lambdaMsByFunction: byFunction,
        coldStarts: cold,
        runStepPhases: phases.totals(),
        usageByFunction,
        runStepInvocations,
        load: { start: loadStart, end: loadAverage() },
        ...(recovery ? { recovery } : {}),
      };
    } finally {
      b.stack.lambdas.events.off('invocation-started', onStarted);
      b.stack.lambdas.events.off('invocation-ended', onEnded);
      b.stack.lambdas.events.off('fault-fired', onFault);
      b.stack.lambdas.events.off('fault-point', onPoint);
      b.events.off('history', onHistory);
    }
  }

  /** The clean job times at `speed` (`own`, or a latency profile's text), created empty on first use. */
  cleanJobsAt(speed: string, latency: boolean): CleanJobs {
    let jobs = this.cleanJobs.get(speed);
    if (!jobs) {
      jobs = { speed, latency, naiveMs: [], belayMs: [] };
      this.cleanJobs.set(speed, jobs);
    }
    return jobs;
  }

  /** Load average at the start of the first and the end of the last of `runs`. */
  static loadOf(runs: readonly MeasuredRun[]): { start: LoadAverage; end: LoadAverage } {
    return { start: runs[0]?.load.start ?? loadAverage(), end: runs.at(-1)?.load.end ?? loadAverage() };
  }

  /** Clean warm runs until there are `n` of them. */
  async ensureCleanWarm(n: number): Promise<MeasuredRun[]> {
    while (this.cleanWarm.length < n) {
      const run = await this.measuredRun('warm', { kind: 'clean', accountId: this.measuredAccount('warm') });
      this.cleanWarm.push(run);
      this.log(`belay clean run ${this.cleanWarm.length}/${n}: ${(run.wallMs / 1000).toFixed(1)} s`);
    }
    return this.cleanWarm.slice(0, n);
  }

  /** Stops a stack now (its browsers ended), to free the machine for the next section. */
  async stopStack(mode: 'warm' | 'cold'): Promise<void> {
    const b = this.#stacks.get(mode);
    if (!b) return;
    this.#stacks.delete(mode);
    this.log(`stopping the ${mode} local stack`);
    for (const pid of b.stack.anchor.browserPids()) this.pids.add(pid);
    await b.stack.stop({ endSessions: true });
  }

  /** Stops everything and removes the data directory. */
  async close(): Promise<void> {
    for (const mode of [...this.#stacks.keys()]) await this.stopStack(mode).catch(() => undefined);
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
