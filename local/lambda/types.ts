/**
 * Options and interface of the local Lambda runner.
 */

import type { EventEmitter } from 'node:events';
import type { FaultPoint, FaultPointInfo } from '../../lambdas/lib/fault.ts';
import type { EnforcementSpec } from '../iam/policies.ts';
import type { InvokeFn } from '../sfn/types.ts';
import type { LambdaRunnerEvents } from './events.ts';

/** One function the runner can invoke. */
export interface LambdaFunctionConfig {
  /** Path to the handler module (relative paths resolve from the repository root). */
  entry: string;
  /** Exported handler (default `handler`). */
  exportName?: string;
  /** The function's timeout: the invocation is killed after it, as Lambda does. */
  timeoutMs: number;
  /** Environment of this function (over the runner's `env`). */
  env?: Record<string, string>;
  /** Concurrent invocations allowed (default unlimited); more reject `Lambda.TooManyRequestsException`. */
  maxConcurrency?: number;
  /**
   * Provisioned concurrency (warm mode; default 0): this many workers are started with the
   * runner and initialized before any invocation (`AWS_LAMBDA_INITIALIZATION_TYPE` is
   * `provisioned-concurrency` in them), and one that dies is replaced at once, as Lambda does.
   */
  provisioned?: number;
  /** The function's memory in MB (default 1024): its context's `memoryLimitInMB`, and Node's heap flags as Lambda sizes them. */
  memoryMb?: number;
  /**
   * Packages shipped beside the function's bundle and loaded by it at run time
   * (`PLAYWRIGHT_RUNTIME_MODULES` for a function that drives a browser): its compile cache
   * covers them. Default none.
   */
  runtimeModules?: readonly string[];
  /**
   * Hold every AWS SDK call of the function to this IAM policy (from the synthesized
   * template; see `local/iam/`): a call the policy does not allow is refused with AWS's
   * `AccessDeniedException`. Without it the function's calls are not checked.
   */
  iam?: EnforcementSpec;
}

/** The Node workers run on, as Lambda's runtime, and whether they read a compile cache. */
export interface LambdaRuntime {
  /** The Node binary and its version (`ensureLambdaNode()`); default: this process's Node. */
  node?: { execPath: string; version: string };
  /**
   * Build V8's compile cache of each bundle with that Node (`lambdas/compile-cache.ts`) and
   * start workers reading it, as a deployment with `belay:lambdaNode` does (bundled mode only).
   * Each worker reads a private copy: Node adds entries to a cache it reads, and in Lambda the
   * cache's folder is read-only.
   */
  compileCache?: boolean;
}

/** Options of `createLambdaRunner`. */
export interface LambdaRunnerOptions {
  /** By function name or ARN (an ARN key is reduced to its function name). */
  functions: Record<string, LambdaFunctionConfig>;
  /** `warm`: reuse a worker per function across invocations; `cold`: a fresh process per invocation. */
  mode: 'cold' | 'warm';
  /** Environment of every function (over this process's environment). */
  env?: Record<string, string>;
  /**
   * Run each handler from an esbuild bundle made as the stack deploys it (default true), which
   * loads as a Lambda cold start does; false runs the TypeScript sources through tsx.
   */
  bundle?: boolean;
  /**
   * The registry module generated for the playbooks the handlers run (`writeRegistryModule`),
   * bundled in as their `#belay/playbooks`. Bundles built without one have no playbooks.
   */
  playbookRegistry?: string;
  /** Enable `faultPoint` in handlers (default true). */
  faultHooks?: boolean;
  /** Workers' stdout/stderr (default `inherit`). */
  output?: 'inherit' | 'ignore';
  /** Error name of a function timeout (default `Lambda.Unknown`, see the AWS note on `LambdaUnknownError`). */
  timeoutErrorName?: string;
  /**
   * Kill the worker when the caller aborts (its task timed out or its execution stopped). Default
   * false: as in AWS, the invocation runs on to its end and its result is dropped.
   */
  killOnAbort?: boolean;
  /** Time allowed to load a handler module (default 30 s). */
  initTimeoutMs?: number;
  /** The Node workers run on (default: this process's, no compile cache); `setRuntime` changes it. */
  runtime?: LambdaRuntime;
  /** Used to build `invokedFunctionArn` when invoked by name. */
  region?: string;
  accountId?: string;
}

/** A fault to inject: SIGKILL the worker when it reaches a matching point. */
export interface ArmedFault {
  /** Function name or ARN; any function when absent. */
  functionName?: string;
  point: FaultPoint;
  /** Every given field must equal the point's. */
  match?: FaultPointInfo;
  /** How many times it fires before it disarms itself (default 1). */
  times?: number;
}

/** A worker as `LambdaRunner.workers()` lists it. */
export interface WorkerInfo {
  functionName: string;
  pid: number;
  busy: boolean;
  /** Its module is loaded (init done). */
  initialized: boolean;
  /** One of the function's provisioned workers. */
  provisioned: boolean;
}

/** The runner. */
export interface LambdaRunner {
  invoke: InvokeFn;
  arm(fault: ArmedFault): void;
  disarm(): void;
  events: EventEmitter<LambdaRunnerEvents>;
  /** Live worker processes. */
  workers(): WorkerInfo[];
  /** Sets a function's provisioned concurrency; resolves once the workers it started have loaded their module. */
  provision(nameOrArn: string, count: number): Promise<void>;
  /**
   * Ends a function's idle warm workers beyond the `keep` most recently used (provisioned ones
   * are not touched), as Lambda reclaims idle environments; resolves once they have exited,
   * with how many ended. A benchmark uses it to put the function back to one warm worker.
   */
  retireIdle(nameOrArn: string, keep?: number): Promise<number>;
  /**
   * Runs workers started from now on on `runtime` (live workers keep theirs: in cold mode every
   * invocation gets a new one); resolves once every function's bundle (and compile cache) for it
   * is built, so no invocation pays for a build. A benchmark compares Node versions and the
   * compile cache with it.
   */
  setRuntime(runtime: LambdaRuntime): Promise<void>;
  /** Kills every worker and waits until each has exited; later invokes reject. */
  stop(): Promise<void>;
}
