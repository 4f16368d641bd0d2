/** The processes a test's stack started: waiting for them to exit, and finding any left running. */
import { spawn } from 'node:child_process';
import { WORKER_COMMAND_LINE } from '../../local/lambda/worker-process.ts';
import { isRunning, type ProcessInfo, processes } from '../../local/processes.ts';
import { sleep } from './fixtures.ts';

export { isRunning, type ProcessInfo, processes };

/** Waits (up to `timeoutMs`) for these processes to exit; returns the PIDs still running. */
export async function waitForExit(pids: readonly number[], timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids.filter(isRunning);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(100);
  }
}

/**
 * Live (not zombie) processes the stack started: whose command line names `dataDir` (Chromium's
 * user-data-dir, DynamoDB Local's dbPath), workers among `workerPids`, and children of this
 * process that are browsers, JVMs or workers. A PID alone is never trusted (PIDs are reused).
 */
function liveProcesses(workerPids: ReadonlySet<number>, dataDir: string, others: OtherStacks): ProcessInfo[] {
  return processes().filter(
    (info) =>
      info.pid !== process.pid &&
      !others.workerPids.has(info.pid) &&
      !others.dataDirs.some((dir) => dir.length > 1 && info.cmdline.includes(dir)) &&
      ((dataDir.length > 1 && info.cmdline.includes(dataDir)) ||
        (workerPids.has(info.pid) && WORKER_COMMAND_LINE.test(info.cmdline)) ||
        (info.ppid === process.pid &&
          (/chromium|java/.test(info.cmdline) || WORKER_COMMAND_LINE.test(info.cmdline)))),
  );
}

/** Processes of other stacks this test process still runs: theirs, not leftovers of the one that stopped. */
export interface OtherStacks {
  dataDirs: readonly string[];
  workerPids: ReadonlySet<number>;
}

/** Waits (up to `timeoutMs`) for the processes to exit; returns those still running. */
export async function leftoverProcesses(
  workerPids: ReadonlySet<number>,
  dataDir: string,
  timeoutMs = 10_000,
  others: OtherStacks = { dataDirs: [], workerPids: new Set() },
): Promise<ProcessInfo[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = liveProcesses(workerPids, dataDir, others);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(200);
  }
}

export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * Runs `node <args>` in `cwd` to its end: its exit code and everything it printed (stdout and
 * stderr, interleaved). A command that has not exited after `timeoutMs` is killed and the call
 * throws: a command that must stop by itself and hangs instead is a failure, never an exit code.
 */
export async function runToExit(
  args: readonly string[],
  options: { cwd: string; timeoutMs: number },
): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => {
    output += String(c);
  });
  child.stderr.on('data', (c) => {
    output += String(c);
  });
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearTimeout(timer);
  if (hung || code === null) {
    throw new Error(
      `node ${args.join(' ')} ${hung ? `had not exited after ${options.timeoutMs} ms` : 'was killed'}; it printed:\n${output.slice(-2_000)}`,
    );
  }
  return { code, output };
}
