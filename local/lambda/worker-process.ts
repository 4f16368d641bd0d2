/**
 * The runner's handle on one worker process: spawn, invoke over IPC, kill, and exit bookkeeping.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FaultPointMessage } from '../../lambdas/lib/fault.ts';
import type { ExitReason } from './errors.ts';
import type {
  ErrorMessage,
  FromWorker,
  IamRefusedMessage,
  InvokeMessage,
  ResultMessage,
  ToWorker,
} from './protocol.ts';

/** The repository root: workers run from it so `--import tsx` resolves. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The worker script, relative to {@link REPO_ROOT} (as it appears in `ps`). */
export const WORKER_SCRIPT = 'local/lambda/worker.ts';

/** Matches a worker's command line, run from the sources or from its bundle (`.local/bundles/local-lambda-worker-*.mjs`). */
export const WORKER_COMMAND_LINE = /local[/-]lambda[/-]worker/;

/** How a worker process is started: tsx over the TypeScript sources, or plain Node over bundles. */
export interface WorkerLaunch {
  /** The worker script (relative to {@link REPO_ROOT} or absolute). */
  script: string;
  /** Node options of the worker process. */
  execArgv: string[];
  /** The Node binary (default: this process's). */
  execPath?: string;
}

/** Workers run from the sources through tsx: the script as it appears in `ps`. */
export const SOURCE_LAUNCH: WorkerLaunch = Object.freeze({
  script: WORKER_SCRIPT,
  execArgv: ['--import', 'tsx'],
});

/** What a worker runs. */
export interface WorkerSpec {
  functionName: string;
  launch: WorkerLaunch;
  /** The handler module (absolute: a TypeScript source or a bundle). */
  entry: string;
  exportName: string;
  env: Record<string, string>;
  output: 'inherit' | 'ignore';
}

/** How a worker ended. */
export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  reason: ExitReason;
}

/** Hooks the runner gives each worker. */
export interface WorkerHooks {
  onFaultPoint(worker: WorkerProcess, message: FaultPointMessage): void;
  onIamRefused(worker: WorkerProcess, message: IamRefusedMessage): void;
  onExit(worker: WorkerProcess, exit: WorkerExit): void;
}

/** One worker process. */
export class WorkerProcess {
  readonly pid: number;
  /** Resolves when the module is loaded; rejects with the {@link WorkerExit} if it dies first. */
  readonly ready: Promise<void>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<WorkerExit>;
  /** Module load time reported by the worker. */
  initMs?: number;
  exit?: WorkerExit;
  /** The request id of the invocation in flight, if any. */
  requestId?: string;

  private readonly child: ChildProcess;
  private killReason?: ExitReason;
  private pending?: {
    id: string;
    resolve(m: ResultMessage | ErrorMessage): void;
    reject(e: WorkerExit): void;
  };

  constructor(
    readonly spec: WorkerSpec,
    private readonly hooks: WorkerHooks,
  ) {
    this.child = fork(
      spec.launch.script,
      ['--function', spec.functionName, '--entry', spec.entry, '--export', spec.exportName],
      {
        cwd: REPO_ROOT,
        ...(spec.launch.execPath ? { execPath: spec.launch.execPath } : {}),
        execArgv: spec.launch.execArgv,
        env: spec.env,
        stdio: ['ignore', spec.output, spec.output, 'ipc'],
        serialization: 'json',
      },
    );
    this.pid = this.child.pid ?? -1;
    let readyResolve!: () => void;
    let readyReject!: (e: WorkerExit) => void;
    this.ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    this.ready.catch(() => {});
    this.exited = new Promise((resolve) => {
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.exit) return;
        const exit: WorkerExit = { code, signal, reason: this.killReason ?? (signal ? 'killed' : 'crashed') };
        this.exit = exit;
        readyReject(exit);
        this.pending?.reject(exit);
        this.pending = undefined;
        this.hooks.onExit(this, exit);
        resolve(exit);
      };
      this.child.once('exit', onExit);
      this.child.once('error', () => onExit(null, null));
    });
    this.child.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        this.initMs = message.initMs;
        readyResolve();
      } else if (message.type === 'result') {
        if (this.pending?.id !== message.id) return;
        const p = this.pending;
        this.pending = undefined;
        this.requestId = undefined;
        p.resolve(message);
      } else if (message.type === 'fault-point') {
        this.hooks.onFaultPoint(this, message);
      } else if (message.type === 'iam-refused') {
        this.hooks.onIamRefused(this, message);
      }
    });
  }

  /** True while the process runs. */
  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Sends one invocation; resolves with the worker's answer or rejects with its exit. */
  invoke(message: InvokeMessage): Promise<ResultMessage | ErrorMessage> {
    return new Promise((resolve, reject) => {
      if (this.exit) {
        reject(this.exit);
        return;
      }
      this.pending = { id: message.id, resolve, reject };
      this.requestId = message.id;
      this.send(message);
    });
  }

  /** Lets the worker go on past a fault point. */
  ack(seq: number): void {
    this.send({ type: 'fault-ack', seq });
  }

  /** SIGKILLs the process, recording why (the invocation in flight rejects with that reason). */
  kill(reason: ExitReason): void {
    if (this.exit) return;
    this.killReason ??= reason;
    this.child.kill('SIGKILL');
  }

  /** Asks the worker to exit; SIGKILLs it if it has not within `graceMs`. */
  async shutdown(graceMs = 1000): Promise<WorkerExit> {
    if (this.exit) return this.exit;
    this.killReason ??= 'stopped';
    this.send({ type: 'shutdown' });
    const timer = setTimeout(() => this.kill('stopped'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private send(message: ToWorker): void {
    if (!this.child.connected) return;
    this.child.send(message, (err) => {
      // The channel closed under us: the exit handler reports the failure.
      if (err) this.kill('crashed');
    });
  }
}
