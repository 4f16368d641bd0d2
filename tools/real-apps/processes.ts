/**
 * The processes of a real application: started in a process group of their own with their
 * output in a log file, waited for with a deadline, and stopped by PID (the group's leader and
 * every PID recorded for it), so nothing they started outlives `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from '../../local/chromium.ts';
import { descendants } from '../../local/processes.ts';
import { RealAppStartError } from './errors.ts';

/** A process started by {@link startProcess}. */
export interface StartedProcess {
  /** The process's PID, also its process group's id. */
  pid: number;
  /** Where its stdout and stderr go. */
  logFile: string;
  /** Has it exited? */
  exited(): boolean;
  /** The end of its log (for error messages). */
  logTail(chars?: number): Promise<string>;
  /**
   * Its PID and those of its live descendants now (a server's forked workers): call once it is
   * ready, so {@link StartedProcess.stop} ends them even after the leader has gone.
   */
  recordChildren(): number[];
  /** Every PID recorded so far (the leader first). */
  pids(): number[];
  /**
   * SIGTERM to the group and each recorded PID, SIGKILL to whatever is left after `graceMs`;
   * resolves once every recorded PID is gone. Safe to call twice.
   */
  stop(graceMs?: number): Promise<void>;
}

function signal(pid: number, sig: NodeJS.Signals, group: boolean): void {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    // gone already (or, for a group, no longer a group)
  }
}

/** Waits until none of `pids` is alive, or `timeoutMs` passed; returns those still alive. */
export async function waitGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = pids.filter(isProcessAlive);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await sleep(50);
  }
}

/**
 * Starts `command` detached (its own process group, so its forked workers can be signalled
 * with it) with stdout and stderr appended to `logFile`. A process left running when this
 * Node process exits is SIGKILLed with its group.
 *
 * @example
 * const php = startProcess('php', ['-S', '127.0.0.1:8080'], { logFile: '/tmp/x/php.log' });
 * await php.stop();
 */
export function startProcess(
  command: string,
  args: readonly string[],
  options: { logFile: string; cwd?: string; env?: NodeJS.ProcessEnv },
): StartedProcess {
  const fd = openSync(options.logFile, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new RealAppStartError(command, 'could not be spawned');
  // A detached child would otherwise keep this process's event loop alive.
  child.unref();
  let done = false;
  child.once('exit', () => {
    done = true;
  });
  const recorded = new Set<number>([pid]);
  const killOnExit = (): void => {
    signal(pid, 'SIGKILL', true);
    for (const p of recorded) signal(p, 'SIGKILL', false);
  };
  process.once('exit', killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = async (graceMs = 5_000): Promise<void> => {
    stopping ??= (async () => {
      const all = [...recorded];
      signal(pid, 'SIGTERM', true);
      for (const p of all) signal(p, 'SIGTERM', false);
      let alive = await waitGone(all, graceMs);
      if (alive.length > 0) {
        signal(pid, 'SIGKILL', true);
        for (const p of alive) signal(p, 'SIGKILL', false);
        alive = await waitGone(alive, 5_000);
      }
      process.removeListener('exit', killOnExit);
      if (alive.length > 0)
        throw new RealAppStartError(command, `PIDs ${alive.join(', ')} are still running after SIGKILL`);
    })();
    return stopping;
  };

  return {
    pid,
    logFile: options.logFile,
    exited: () => done || !isProcessAlive(pid),
    logTail: async (chars = 2_000) => (await readFile(options.logFile, 'utf8').catch(() => '')).slice(-chars),
    recordChildren: () => {
      for (const p of descendants(pid)) if (isProcessAlive(p)) recorded.add(p);
      return [...recorded];
    },
    pids: () => [...recorded],
    stop,
  };
}

/**
 * Runs a command to its end with `input` on its stdin (so no secret is on a command line):
 * its output, or {@link RealAppStartError} when it fails or outlives `timeoutMs` (then it is
 * SIGKILLed). The error carries the end of its output, never `input`.
 */
export function runToEnd(
  command: string,
  args: readonly string[],
  options: { timeoutMs: number; input?: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new RealAppStartError(command, `could not run: ${err.message}`, {}, { cause: err }));
    });
    child.once('close', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else
        reject(
          new RealAppStartError(
            command,
            sig ? `stopped by ${sig} (time limit ${options.timeoutMs} ms)` : `exited with ${code}`,
            { log: output },
          ),
        );
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Does something accept TCP connections on 127.0.0.1:`port`? */
export function accepts(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/**
 * Polls `ready` until it answers true, the process exits, or `timeoutMs` passes (then the
 * process is stopped and {@link RealAppStartError} thrown with the end of its log).
 */
export async function waitReady(
  started: StartedProcess,
  what: string,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (started.exited())
      throw new RealAppStartError(what, 'exited while starting', { log: await started.logTail() });
    if (Date.now() >= deadline) {
      await started.stop().catch(() => undefined);
      throw new RealAppStartError(what, `not ready after ${Math.round(timeoutMs / 1000)} s`, {
        log: await started.logTail(),
      });
    }
    await sleep(100);
  }
}
