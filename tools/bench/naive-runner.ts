/**
 * The supervisor of the naive baseline: starts `naive.ts` as a process, and when the process
 * dies starts it again, from step one, in a new browser (what an agent script's supervisor
 * does today). To inject the crash it SIGKILLs the process (and its browser, which a dying
 * worker takes with it) the moment it reports the armed fault point.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isProcessAlive, killProcessGroup, processCommandLine, waitForExit } from '../../local/chromium.ts';
import type { NaiveMessage } from './naive.ts';

const NAIVE_SCRIPT = fileURLToPath(new URL('./naive.ts', import.meta.url));

/** What one naive run measured. */
export interface NaiveRun {
  /** From starting the first process to the order's confirmation, ms. */
  wallMs: number;
  /** Processes started (1 + restarts). */
  processes: number;
  /** Steps executed, across every process (a clean run executes 14). */
  stepsExecuted: number;
  crashed: boolean;
}

/** Every process a naive run started (workers and their Chromium), for the final check. */
export const naivePids = new Set<number>();

/** Ends whatever a naive run left alive (an interrupted benchmark): its workers and their Chromium. */
export function killNaiveLeftovers(): void {
  for (const pid of naivePids) {
    const cmd = processCommandLine(pid) ?? '';
    if (isProcessAlive(pid) && (/chrom/.test(cmd) || cmd.includes(NAIVE_SCRIPT))) killProcessGroup(pid);
  }
}

interface Attempt {
  code: number | null;
  done: boolean;
  faulted: boolean;
  steps: number;
  stderr: string;
}

function attemptOnce(args: string[], crash: boolean): Promise<Attempt> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', NAIVE_SCRIPT, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid) naivePids.add(child.pid);
    const browserPids: number[] = [];
    const result: Attempt = { code: null, done: false, faulted: false, steps: 0, stderr: '' };
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const msg = JSON.parse(line) as NaiveMessage;
        if (msg.type === 'browser') {
          browserPids.push(...msg.pids);
          for (const p of msg.pids) naivePids.add(p);
        } else if (msg.type === 'step') result.steps++;
        else if (msg.type === 'done') result.done = true;
        else if (msg.type === 'fault' && crash) {
          // The worker dies, and its browser with it.
          result.faulted = true;
          child.kill('SIGKILL');
          for (const pid of browserPids) killProcessGroup(pid);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      result.stderr = (result.stderr + chunk.toString()).slice(-2000);
    });
    child.once('error', fail);
    child.once('exit', (code) => {
      result.code = code;
      // A worker that died without closing its browser: end the browser as well.
      const left = browserPids.filter((p) => isProcessAlive(p) && /chrom/.test(processCommandLine(p) ?? ''));
      for (const pid of left) killProcessGroup(pid);
      Promise.all(left.map((p) => waitForExit(p, 5_000))).then(() => ok(result), fail);
    });
  });
}

/**
 * Runs the naive checkout to its end on `username`. With `crashAtStep` the first process is
 * killed mid-action in that step (1-based); every restart runs clean from step one.
 */
export async function runNaive(options: {
  shopBaseUrl: string;
  username: string;
  jobId: string;
  crashAtStep?: number;
  /** Restarts allowed after a death (default 3). */
  maxRestarts?: number;
  log?: (line: string) => void;
}): Promise<NaiveRun> {
  const started = performance.now();
  const run: NaiveRun = { wallMs: 0, processes: 0, stepsExecuted: 0, crashed: false };
  const maxRestarts = options.maxRestarts ?? 3;
  for (let i = 0; i <= maxRestarts; i++) {
    const crash = i === 0 && options.crashAtStep !== undefined;
    const args = ['--shop', options.shopBaseUrl, '--username', options.username, '--job-id', options.jobId];
    if (crash) args.push('--crash-at-step', String(options.crashAtStep));
    run.processes++;
    const attempt = await attemptOnce(args, crash);
    run.stepsExecuted += attempt.steps;
    if (attempt.faulted) run.crashed = true;
    if (attempt.done && attempt.code === 0) {
      run.wallMs = performance.now() - started;
      return run;
    }
    if (!attempt.faulted) {
      options.log?.(
        `naive process died unexpectedly (exit ${attempt.code}): ${attempt.stderr.trim().slice(-500)}`,
      );
    }
  }
  throw new Error(`the naive runner did not finish after ${maxRestarts} restarts`);
}
