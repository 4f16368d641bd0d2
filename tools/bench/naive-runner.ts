/**
 * The supervisor of the naive baseline: starts `naive.ts` (or `naive-agent.ts`) as a process,
 * and when the process dies starts it again, from step one, in a new browser (what an agent
 * script's supervisor does today). With `resume` it is the Temporal recipes' supervisor
 * instead: a restart resumes after the last verified step (the checkpoint), in a new browser. To inject the crash it SIGKILLs the process (and its browser, which a dying
 * worker takes with it) the moment it reports the armed fault point.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isProcessAlive, killProcessGroup, processCommandLine, waitForExit } from '../../local/chromium.ts';
import type { NaiveMessage } from './naive.ts';

const NAIVE_SCRIPT = fileURLToPath(new URL('./naive.ts', import.meta.url));
/** The scripts a supervisor here starts (the scripted checkout's and the agent job's). */
const SCRIPTS = [NAIVE_SCRIPT, fileURLToPath(new URL('./naive-agent.ts', import.meta.url))];

/** What one naive run measured. */
export interface NaiveRun {
  /** From starting the first process to the order's confirmation, ms. */
  wallMs: number;
  /** Processes started (1 + restarts). */
  processes: number;
  /** Steps executed, across every process (a clean run executes 14). */
  stepsExecuted: number;
  crashed: boolean;
  /** Model decisions the processes asked for, the killed one's included (each was paid for). */
  modelCalls: number;
  /** Their model tokens, input and output together. */
  usage: number;
  /** Their model dollars, at the model's rate (0 on the local policy). */
  modelUsd: number;
  /** From the kill to the crashed step verified again, ms (NaN without a crash). */
  killToVerifiedMs: number;
}

/** What a supervisor knows when it restarts: the steps verified so far (1-based count) and their evidence. */
export interface Checkpoints {
  verified: number;
  evidence: Record<string, unknown>;
}

/** Every process a naive run started (workers and their Chromium), for the final check. */
export const naivePids = new Set<number>();

/** Ends whatever a naive run left alive (an interrupted benchmark): its workers and their Chromium. */
export function killNaiveLeftovers(): void {
  for (const pid of naivePids) {
    const cmd = processCommandLine(pid) ?? '';
    if (isProcessAlive(pid) && (/chrom/.test(cmd) || SCRIPTS.some((s) => cmd.includes(s))))
      killProcessGroup(pid);
  }
}

interface Attempt {
  code: number | null;
  done: boolean;
  faulted: boolean;
  steps: number;
  modelCalls: number;
  usage: number;
  modelUsd: number;
  stderr: string;
}

function attemptOnce(
  script: string,
  args: string[],
  crash: boolean,
  on: { killed(): void; step(index: number, id: string, evidence: unknown): void },
  env: Record<string, string> = {},
): Promise<Attempt> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    if (child.pid) naivePids.add(child.pid);
    const browserPids: number[] = [];
    const result: Attempt = {
      code: null,
      done: false,
      faulted: false,
      steps: 0,
      modelCalls: 0,
      usage: 0,
      modelUsd: 0,
      stderr: '',
    };
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
        } else if (msg.type === 'step') {
          result.steps++;
          on.step(msg.index, msg.id, msg.evidence);
        } else if (msg.type === 'model') {
          result.modelCalls++;
          result.usage += msg.usage;
          result.modelUsd += msg.usd;
        } else if (msg.type === 'done') result.done = true;
        else if (msg.type === 'fault' && crash && !result.faulted) {
          // The worker dies, and its browser with it.
          result.faulted = true;
          child.kill('SIGKILL');
          for (const pid of browserPids) killProcessGroup(pid);
          on.killed();
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
 * Runs `script` to its end under a supervisor that starts it again when it dies. With
 * `crash` the first process is killed at its fault point (the script was told where by
 * `crash.args`); `restartArgs` says what a restart is told (nothing for the naive runner, which
 * starts from step one; the checkpoints for the Temporal recipe's).
 */
export async function supervise(options: {
  script?: string;
  args: string[];
  crash?: { args: string[]; step: number };
  restartArgs?: (checkpoints: Checkpoints) => string[];
  maxRestarts?: number;
  log?: (line: string) => void;
  /** Added to every process's environment (a model provider's key and URL). */
  env?: Record<string, string>;
}): Promise<NaiveRun> {
  const started = performance.now();
  const run: NaiveRun = {
    wallMs: 0,
    processes: 0,
    stepsExecuted: 0,
    crashed: false,
    modelCalls: 0,
    usage: 0,
    modelUsd: 0,
    killToVerifiedMs: Number.NaN,
  };
  const checkpoints: Checkpoints = { verified: 0, evidence: {} };
  let killedAt: number | undefined;
  const on = {
    killed: () => {
      killedAt = performance.now();
    },
    step: (index: number, id: string, evidence: unknown) => {
      checkpoints.verified = Math.max(checkpoints.verified, index + 1);
      checkpoints.evidence[id] = evidence;
      // The killed step never verified in the killed process: the first verification after the kill is its re-run.
      if (killedAt !== undefined && index + 1 === options.crash?.step && Number.isNaN(run.killToVerifiedMs))
        run.killToVerifiedMs = performance.now() - killedAt;
    },
  };
  const maxRestarts = options.maxRestarts ?? 3;
  for (let i = 0; i <= maxRestarts; i++) {
    const crash = i === 0 && options.crash !== undefined;
    const args = [
      ...options.args,
      ...(crash ? (options.crash?.args ?? []) : []),
      ...(i > 0 ? (options.restartArgs?.(checkpoints) ?? []) : []),
    ];
    run.processes++;
    const attempt = await attemptOnce(options.script ?? NAIVE_SCRIPT, args, crash, on, options.env);
    run.stepsExecuted += attempt.steps;
    run.modelCalls += attempt.modelCalls;
    run.usage += attempt.usage;
    run.modelUsd += attempt.modelUsd;
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
  /**
   * The Temporal recipe: a restart resumes after the last step verified (its checkpoint), in a
   * new browser that signs in and goes to the step's start again; without it, step one.
   */
  resume?: boolean;
  log?: (line: string) => void;
}): Promise<NaiveRun> {
  const args = ['--shop', options.shopBaseUrl, '--username', options.username, '--job-id', options.jobId];
  return supervise({
    args,
    ...(options.crashAtStep === undefined
      ? {}
      : { crash: { args: ['--crash-at-step', String(options.crashAtStep)], step: options.crashAtStep } }),
    ...(options.resume
      ? {
          restartArgs: (c: Checkpoints) => [
            '--from-step',
            String(c.verified + 1),
            '--evidence',
            JSON.stringify(c.evidence),
          ],
        }
      : {}),
    ...(options.maxRestarts === undefined ? {} : { maxRestarts: options.maxRestarts }),
    ...(options.log ? { log: options.log } : {}),
  });
}
