/**
 * The local Lambda runner: each invocation runs the real handler in a child process, so a fault
 * injector can SIGKILL it at a chosen point, and a dying process surfaces as a dying Lambda does.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { resolve as resolvePath } from 'node:path';
import { lambdaNodeFlags } from '../../lambdas/compile-cache.ts';
import { FAULT_HOOKS_ENV } from '../../lambdas/lib/fault.ts';
import type { InvokeOptions } from '../sfn/types.ts';
import { bundleHandler } from './bundle.ts';
import { type BundleCache, ensureBundleCache, privateCacheCopy } from './compile-cache.ts';
import {
  type ExitReason,
  FunctionNotFoundError,
  InvocationAbortedError,
  LambdaFunctionError,
  LambdaRunnerStoppedError,
  LambdaUnknownError,
  TooManyRequestsError,
} from './errors.ts';
import type { LambdaRunnerEvents } from './events.ts';
import { matchFault } from './faults.ts';
import { type InvocationUsage, LOCAL_IAM_ENV } from './protocol.ts';
import type {
  ArmedFault,
  LambdaFunctionConfig,
  LambdaRunner,
  LambdaRunnerOptions,
  LambdaRuntime,
} from './types.ts';
import {
  REPO_ROOT,
  SOURCE_LAUNCH,
  WORKER_SCRIPT,
  type WorkerExit,
  type WorkerLaunch,
  WorkerProcess,
} from './worker-process.ts';

export type {
  ArmedFault,
  LambdaFunctionConfig,
  LambdaRunner,
  LambdaRunnerOptions,
  LambdaRuntime,
  WorkerInfo,
} from './types.ts';

/** How a function's workers start and what they load on one runtime. */
interface Code {
  launch: WorkerLaunch;
  entry: string;
  /** The bundle's compile cache, when the runtime reads one. */
  cache?: BundleCache;
}

interface FunctionState {
  name: string;
  config: LambdaFunctionConfig;
  /** Provisioned environments to keep (warm mode): initialized ahead of any invocation, replaced when one dies. */
  provisioned: number;
  /** The provisioned workers, idle or busy. */
  reserved: Set<WorkerProcess>;
  /** Its code by runtime, once known (bundles and caches are built on first use). */
  code: Map<string, Promise<Code>>;
  idle: WorkerProcess[];
  inFlight: number;
}

/** Memory of a function that does not say, as the stack deploys it. */
const DEFAULT_MEMORY_MB = 1024;

/** esbuild's target for bundles run by `runtime`'s Node. */
function targetOf(runtime: LambdaRuntime): string {
  return `node${(runtime.node?.version ?? process.versions.node).split('.')[0]}`;
}

/** Reduces `arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]` to `<name>`. */
export function functionNameOf(nameOrArn: string): string {
  const m = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)(:[^:]+)?$/.exec(nameOrArn);
  return m?.[1] ?? nameOrArn;
}

function exitDetail(exit: WorkerExit, timeoutMs: number, initTimeoutMs: number): string {
  switch (exit.reason) {
    case 'timeout':
      return `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`;
    case 'init-timeout':
      return `Init timed out after ${(initTimeoutMs / 1000).toFixed(2)} seconds`;
    case 'stopped':
      return 'Runtime exited: the local Lambda runner stopped';
    default:
      return exit.signal
        ? `Runtime exited with error: signal: ${exit.signal === 'SIGKILL' ? 'killed' : exit.signal}`
        : `Runtime exited with error: exit status ${exit.code}`;
  }
}

/**
 * Creates a local Lambda runner.
 *
 * @example
 * const lambdas = createLambdaRunner({
 *   mode: 'warm',
 *   functions: { 'run-step': { entry: 'lambdas/run-step/handler.ts', timeoutMs: 120_000 } },
 * });
 * lambdas.arm({ functionName: 'run-step', point: 'mid-action', match: { stepIndex: 12 } });
 * await lambdas.invoke('arn:aws:lambda:us-east-1:000000000000:function:run-step', event, { timeoutMs, signal });
 */
export function createLambdaRunner(options: LambdaRunnerOptions): LambdaRunner {
  const events = new EventEmitter<LambdaRunnerEvents>();
  const functions = new Map<string, FunctionState>();
  for (const [key, config] of Object.entries(options.functions)) {
    const name = functionNameOf(key);
    functions.set(name, {
      name,
      config,
      idle: [],
      inFlight: 0,
      provisioned: config.provisioned ?? 0,
      reserved: new Set(),
      code: new Map(),
    });
  }
  const all = new Set<WorkerProcess>();
  let armed: Array<ArmedFault & { left: number }> = [];
  let stopped = false;
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '000000000000';
  const initTimeoutMs = options.initTimeoutMs ?? 30_000;
  let runtime: LambdaRuntime = { ...options.runtime };
  /** A worker's private copy of its compile cache, removed when it exits. */
  const cacheCopies = new Map<WorkerProcess, () => Promise<void>>();

  const hooks = {
    onFaultPoint(worker: WorkerProcess, message: Parameters<typeof matchFault>[1]): void {
      const functionName = worker.spec.functionName;
      const detail = {
        functionName,
        pid: worker.pid,
        requestId: worker.requestId,
        point: message.point,
        info: message.info,
        ...(message.cpuMs === undefined ? {} : { cpuMs: message.cpuMs }),
      };
      events.emit('fault-point', detail);
      const hit = matchFault(armed, message, functionName, functionNameOf);
      if (!hit) {
        worker.ack(message.seq);
        return;
      }
      hit.left--;
      armed = armed.filter((f) => f.left > 0);
      worker.kill('fault');
      events.emit('fault-fired', detail);
    },
    onIamRefused(
      worker: WorkerProcess,
      message: { action: string; resource: string; message: string },
    ): void {
      events.emit('iam-refused', {
        functionName: worker.spec.functionName,
        pid: worker.pid,
        requestId: worker.requestId,
        action: message.action,
        resource: message.resource,
        message: message.message,
      });
    },
    onExit(worker: WorkerProcess, exit: WorkerExit): void {
      all.delete(worker);
      const fn = functions.get(worker.spec.functionName);
      if (fn) {
        fn.idle = fn.idle.filter((w) => w !== worker);
        // Lambda replaces a provisioned environment that died.
        if (fn.reserved.delete(worker)) void topUp(fn);
      }
      void cacheCopies.get(worker)?.();
      cacheCopies.delete(worker);
      events.emit('worker-exited', { functionName: worker.spec.functionName, pid: worker.pid, ...exit });
    },
  };

  const bundled = options.bundle ?? true;
  const workerLaunches = new Map<string, Promise<WorkerLaunch>>();
  /** The function's code on the current runtime: its bundle (and cache) and the bundled worker, or its sources through tsx. */
  const codeOf = (fn: FunctionState): Promise<Code> => {
    const at = runtime;
    const execPath = at.node?.execPath;
    if (!bundled) {
      const launch = { ...SOURCE_LAUNCH, ...(execPath ? { execPath } : {}) };
      return Promise.resolve({ launch, entry: resolvePath(REPO_ROOT, fn.config.entry) });
    }
    const target = targetOf(at);
    const key = JSON.stringify([execPath, target, at.compileCache === true]);
    let workerLaunch = workerLaunches.get(target);
    if (!workerLaunch) {
      workerLaunch = bundleHandler(WORKER_SCRIPT, { target }).then((script) => ({
        script,
        // Node's own options come from the function's environment (`NODE_OPTIONS`), as in Lambda.
        execArgv: [],
      }));
      workerLaunches.set(target, workerLaunch);
    }
    let code = fn.code.get(key);
    if (!code) {
      const bundle = bundleHandler(fn.config.entry, {
        target,
        ...(options.playbookRegistry ? { playbookRegistry: options.playbookRegistry } : {}),
      });
      const node = at.node;
      const cache =
        at.compileCache && node
          ? bundle.then((b) => ensureBundleCache(b, node, memoryOf(fn), fn.config.runtimeModules ?? []))
          : Promise.resolve(undefined);
      const built: Promise<Code> = Promise.all([workerLaunch, bundle, cache]).then(
        ([launch, entry, bundleCache]) => ({
          launch: { ...launch, ...(execPath ? { execPath } : {}) },
          entry,
          ...(bundleCache ? { cache: bundleCache } : {}),
        }),
      );
      // A build that failed (a syntax error) is tried again on the next invocation.
      built.catch(() => {
        if (fn.code.get(key) === built) fn.code.delete(key);
        if (workerLaunches.get(target) === workerLaunch) workerLaunches.delete(target);
      });
      fn.code.set(key, built);
      code = built;
    }
    return code;
  };
  const memoryOf = (fn: FunctionState): number => fn.config.memoryMb ?? DEFAULT_MEMORY_MB;

  const spawn = (
    fn: FunctionState,
    code: Code,
    initialization: 'on-demand' | 'provisioned-concurrency' = 'on-demand',
  ): WorkerProcess => {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      ...options.env,
      ...fn.config.env,
      AWS_LAMBDA_FUNCTION_NAME: fn.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_TIMEOUT: String(Math.ceil(fn.config.timeoutMs / 1000)),
      AWS_REGION: options.env?.AWS_REGION ?? process.env.AWS_REGION ?? region,
      // As Lambda sets it: handlers may do more at init in a provisioned environment.
      AWS_LAMBDA_INITIALIZATION_TYPE: initialization,
      // Lambda hands every function its role's credentials; here throwaway ones, so that no
      // call can reach a real AWS account with a developer's credentials by mistake.
      AWS_ACCESS_KEY_ID: 'ASIALOCALLAMBDA00000',
      AWS_SECRET_ACCESS_KEY: 'local-lambda-secret-access-key',
      AWS_SESSION_TOKEN: 'local-lambda-session-token',
    };
    if (fn.config.iam) env[LOCAL_IAM_ENV] = JSON.stringify(fn.config.iam);
    else delete env[LOCAL_IAM_ENV];
    if (options.faultHooks ?? true) env[FAULT_HOOKS_ENV] = '1';
    else delete env[FAULT_HOOKS_ENV];
    // Read only through a private copy (Node adds to a cache it reads; Lambda's is read-only).
    const copy = code.cache ? privateCacheCopy(code.cache) : undefined;
    if (copy) env.NODE_COMPILE_CACHE = copy.dir;
    else delete env.NODE_COMPILE_CACHE;
    const worker = new WorkerProcess(
      {
        functionName: fn.name,
        // Started with the flags Lambda's runtime gives Node for the function's memory.
        launch: { ...code.launch, execArgv: [...code.launch.execArgv, ...lambdaNodeFlags(memoryOf(fn))] },
        entry: code.entry,
        exportName: fn.config.exportName ?? 'handler',
        env,
        output: options.output ?? 'inherit',
      },
      hooks,
    );
    all.add(worker);
    if (copy) {
      if (worker.alive) cacheCopies.set(worker, copy.remove);
      else void copy.remove();
    }
    events.emit('worker-spawned', { functionName: fn.name, pid: worker.pid });
    return worker;
  };

  /**
   * Starts provisioned workers until the function has as many as it should (warm mode only: in
   * cold mode every invocation gets a new process). They load their module before any
   * invocation, then wait idle; the first invocation to find one is warm.
   */
  const topUp = async (fn: FunctionState): Promise<WorkerProcess[]> => {
    if (options.mode !== 'warm' || stopped) return [];
    const code = await codeOf(fn).catch(() => undefined);
    const started: WorkerProcess[] = [];
    while (code && !stopped && fn.reserved.size < fn.provisioned) {
      const worker = spawn(fn, code, 'provisioned-concurrency');
      fn.reserved.add(worker);
      fn.idle.unshift(worker);
      started.push(worker);
    }
    return started;
  };

  const takeWorker = async (fn: FunctionState): Promise<{ worker: WorkerProcess; cold: boolean }> => {
    if (options.mode === 'warm') {
      // A worker that has loaded its module, the most recently used first; else one still
      // loading (a provisioned worker just started: the invocation waits for its init, cold).
      let loading = -1;
      for (let i = fn.idle.length - 1; i >= 0; i--) {
        const w = fn.idle[i] as WorkerProcess;
        if (!w.alive) continue;
        if (w.initMs !== undefined) {
          fn.idle.splice(i, 1);
          return { worker: w, cold: false };
        }
        if (loading < 0) loading = i;
      }
      if (loading >= 0) return { worker: fn.idle.splice(loading, 1)[0] as WorkerProcess, cold: true };
    }
    const code = await codeOf(fn);
    // Stopped while the bundle was built: a worker spawned now would outlive stop().
    if (stopped) throw new LambdaRunnerStoppedError();
    return { worker: spawn(fn, code), cold: true };
  };

  const invoke = async (nameOrArn: string, payload: unknown, opts?: InvokeOptions): Promise<unknown> => {
    if (stopped) throw new LambdaRunnerStoppedError();
    const fn = functions.get(functionNameOf(nameOrArn));
    if (!fn) throw new FunctionNotFoundError(nameOrArn);
    if (opts?.signal.aborted) throw new InvocationAbortedError(fn.name);
    if (fn.inFlight >= (fn.config.maxConcurrency ?? Number.POSITIVE_INFINITY))
      throw new TooManyRequestsError(fn.name);
    fn.inFlight++;
    const requestId = randomUUID();
    let taken: { worker: WorkerProcess; cold: boolean };
    try {
      taken = await takeWorker(fn);
    } catch (err) {
      fn.inFlight--;
      // A handler that does not build fails like one that does not load.
      throw new LambdaFunctionError(
        fn.name,
        requestId,
        'Runtime.ImportModuleError',
        (err as Error).message,
        [],
      );
    }
    const { worker, cold } = taken;
    const startedAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => worker.kill('killed');
    let outcome: {
      outcome: 'success' | 'error' | 'died';
      errorName?: string;
      reason?: ExitReason;
      usage?: InvocationUsage;
    } = {
      outcome: 'died',
    };
    try {
      const initTimer = setTimeout(() => worker.kill('init-timeout'), initTimeoutMs);
      try {
        await worker.ready;
      } finally {
        clearTimeout(initTimer);
      }
      events.emit('invocation-started', {
        functionName: fn.name,
        requestId,
        pid: worker.pid,
        cold,
        initMs: worker.initMs,
      });
      const deadlineMs = Date.now() + fn.config.timeoutMs;
      timer = setTimeout(() => worker.kill('timeout'), fn.config.timeoutMs);
      if (options.killOnAbort) opts?.signal.addEventListener('abort', onAbort, { once: true });
      const answer = await worker.invoke({
        type: 'invoke',
        id: requestId,
        payload: payload ?? null,
        context: {
          awsRequestId: requestId,
          functionName: fn.name,
          invokedFunctionArn: nameOrArn.startsWith('arn:')
            ? nameOrArn
            : `arn:aws:lambda:${region}:${accountId}:function:${fn.name}`,
          memoryLimitInMB: String(memoryOf(fn)),
          deadlineMs,
        },
      });
      const usage = answer.usage ? { usage: answer.usage } : {};
      if (answer.ok) {
        outcome = { outcome: 'success', ...usage };
        return answer.value;
      }
      outcome = { outcome: 'error', errorName: answer.errorType, ...usage };
      throw new LambdaFunctionError(fn.name, requestId, answer.errorType, answer.errorMessage, answer.trace);
    } catch (err) {
      if (err instanceof Error) throw err;
      const exit = err as WorkerExit;
      const error = new LambdaUnknownError(
        fn.name,
        requestId,
        exit.reason,
        worker.pid,
        exitDetail(exit, fn.config.timeoutMs, initTimeoutMs),
        {
          errorName: exit.reason === 'timeout' ? options.timeoutErrorName : undefined,
        },
      );
      outcome = { outcome: 'died', errorName: error.name, reason: exit.reason };
      throw error;
    } finally {
      clearTimeout(timer);
      opts?.signal.removeEventListener('abort', onAbort);
      fn.inFlight--;
      // A provisioned worker beyond a lowered count goes on as an ordinary warm worker.
      if (fn.reserved.size > fn.provisioned) fn.reserved.delete(worker);
      if (worker.alive) {
        if (options.mode === 'warm' && !stopped) fn.idle.push(worker);
        else void worker.shutdown();
      }
      events.emit('invocation-ended', {
        functionName: fn.name,
        requestId,
        pid: worker.pid,
        durationMs: Date.now() - startedAt,
        ...outcome,
      });
    }
  };

  for (const fn of functions.values()) if (fn.provisioned > 0) void topUp(fn);

  return {
    invoke,
    events,
    async provision(nameOrArn, count) {
      const fn = functions.get(functionNameOf(nameOrArn));
      if (!fn) throw new FunctionNotFoundError(nameOrArn);
      if (!Number.isInteger(count) || count < 0) throw new RangeError('count must be a whole number >= 0');
      fn.provisioned = count;
      // Fewer wanted: idle provisioned workers beyond the count stay as ordinary warm workers
      // (a busy one is let go when its invocation ends).
      for (const w of [...fn.reserved]) {
        if (fn.reserved.size <= count) break;
        if (fn.idle.includes(w)) fn.reserved.delete(w);
      }
      const started = await topUp(fn);
      // Resolves once they are initialized (one that dies at init is replaced, not waited for).
      await Promise.all(started.map((w) => w.ready.catch(() => undefined)));
    },
    async retireIdle(nameOrArn, keep = 0) {
      const fn = functions.get(functionNameOf(nameOrArn));
      if (!fn) throw new FunctionNotFoundError(nameOrArn);
      if (!Number.isInteger(keep) || keep < 0) throw new RangeError('keep must be a whole number >= 0');
      // `idle` ends with the most recently used; provisioned workers stay.
      const ordinary = fn.idle.filter((w) => !fn.reserved.has(w));
      const retired = ordinary.slice(0, Math.max(0, ordinary.length - keep));
      fn.idle = fn.idle.filter((w) => !retired.includes(w));
      await Promise.all(retired.map((w) => w.shutdown()));
      return retired.length;
    },
    arm(fault) {
      armed.push({ ...fault, left: fault.times ?? 1 });
    },
    async setRuntime(next) {
      runtime = { ...next };
      await Promise.all([...functions.values()].map((fn) => codeOf(fn)));
    },
    disarm() {
      armed = [];
    },
    workers() {
      return [...all].map((w) => ({
        functionName: w.spec.functionName,
        pid: w.pid,
        busy: w.requestId !== undefined,
        initialized: w.initMs !== undefined,
        provisioned: functions.get(w.spec.functionName)?.reserved.has(w) ?? false,
      }));
    },
    async stop() {
      stopped = true;
      const workers = [...all];
      for (const w of workers) w.kill('stopped');
      await Promise.all(workers.map((w) => w.exited));
    },
  };
}
