/** A stack in a child process, to be SIGKILLed like a crashed machine (or stopped with SIGTERM). */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ApiDeps } from '../../lambdas/lib/api/deps.ts';
import { apiDepsFromEnv } from '../../lambdas/lib/api/runtime.ts';
import { playbookDirs as discoveredDirs } from '../../lambdas/lib/playbooks/discovery/find.ts';
import { loadPlaybooks } from '../../lambdas/lib/playbooks/discovery/load.ts';
import type { LocalStackOptions } from '../../local/stack.ts';
import { TEST_STACK_SETTINGS } from './fixtures.ts';
import { repoPlaybooks } from './playbooks.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** What the child prints once its stack is up (one JSON line on stdout). */
export interface StackProcessInfo {
  /** The child's own PID. */
  pid: number;
  /** Its environment for handlers. */
  env: Record<string, string>;
  apiUrl: string;
  demoApiKey: string;
  sfnEndpoint: string;
  stateMachineArn: string;
  shopUrl: string;
  adminToken: string;
}

/** A stack up in a child process. */
export interface StackProcess {
  child: ChildProcess;
  info: StackProcessInfo;
  /** Every line the child (and the workers whose output it inherits) wrote so far, stdout and stderr. */
  lines(): string[];
  /** Settles when the child has exited. */
  exited: Promise<void>;
}

const STACK_PROCESS_SCRIPT = `
import { startLocalStack } from ${JSON.stringify(`${REPO_ROOT}/local/stack.ts`)};
const stack = await startLocalStack(JSON.parse(process.argv[2]));
process.stdout.write(JSON.stringify({
  ready: true,
  pid: process.pid,
  env: stack.env,
  apiUrl: stack.apiUrl,
  demoApiKey: stack.demoApiKey,
  sfnEndpoint: stack.sfnServer.endpoint,
  stateMachineArn: stack.sfn.stateMachineArn,
  shopUrl: stack.sites.shop.baseUrl,
  adminToken: stack.sites.adminToken,
}) + '\\n');
let stopping = false;
process.on('SIGTERM', async () => {
  if (stopping) return;
  stopping = true;
  await stack.stop({ endSessions: true });
  process.exit(0);
});
setInterval(() => undefined, 60_000);
`;

/**
 * Starts the local stack in a child `node --import tsx` process, with `TEST_STACK_SETTINGS`
 * and `options` over them (its script is written to `options.dataDir`), captures every line
 * it prints, and waits up to `timeoutMs` for it to be up. On SIGTERM the child stops its
 * stack (ending the browser sessions) and exits.
 */
export async function startStackProcess(
  options: Omit<LocalStackOptions, 'log' | 'onHistoryEvent'> & { dataDir: string },
  timeoutMs: number,
): Promise<StackProcess> {
  const script = join(options.dataDir, 'child-stack.mts');
  await writeFile(script, STACK_PROCESS_SCRIPT);
  const settings: LocalStackOptions = {
    ...TEST_STACK_SETTINGS,
    waitTimeOverrides: { ...TEST_STACK_SETTINGS.waitTimeOverrides },
    ...options,
    env: { ...TEST_STACK_SETTINGS.env, ...options.env },
  };
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(settings)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const lines: string[] = [];
  const partial = { stdout: '', stderr: '' };
  const output = (): string[] => [...lines, partial.stdout, partial.stderr].filter((l) => l !== '');
  const tail = (): string => output().slice(-20).join('\n');
  const info = await new Promise<StackProcessInfo>((done, fail) => {
    const timer = setTimeout(() => {
      // Not left running: what it started so far goes with it (its workers) or ends at its idle timeout.
      child.kill('SIGKILL');
      fail(new Error(`the child stack did not start in ${timeoutMs} ms:\n${tail()}`));
    }, timeoutMs);
    const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const parts = (partial[stream] + chunk.toString('utf8')).split('\n');
      partial[stream] = parts.pop() ?? '';
      lines.push(...parts);
      const ready = stream === 'stdout' && parts.find((l) => l.startsWith('{"ready":true'));
      if (ready) {
        clearTimeout(timer);
        done(JSON.parse(ready) as StackProcessInfo);
      }
    };
    child.stdout?.on('data', take('stdout'));
    child.stderr?.on('data', take('stderr'));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fail(new Error(`the child stack exited (${code ?? signal}) before it was ready:\n${tail()}`));
    });
  });
  return { child, info, lines: output, exited };
}

export interface ChildStack {
  child: ChildProcess;
  /** What the child printed once it was up: its environment for handlers, endpoints. */
  info: Pick<StackProcessInfo, 'env' | 'sfnEndpoint' | 'stateMachineArn' | 'pid'>;
  /** SIGKILLs the child process alone (its workers exit with it; browsers and DynamoDB Local live on). */
  kill(): Promise<void>;
}

/**
 * Starts the local stack in a child `tsx` process on the given data directory and ports, so
 * a test can SIGKILL it as a machine would crash.
 */
export async function startChildStack(
  dataDir: string,
  ports: NonNullable<LocalStackOptions['ports']>,
  timeoutMs = 150_000,
  more: Pick<LocalStackOptions, 'applications' | 'playbookDirs'> = {},
): Promise<ChildStack> {
  const { child, info, exited } = await startStackProcess(
    { dataDir, ports, resume: true, ...more },
    timeoutMs,
  );
  return {
    child,
    info,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** API dependencies against a stack running in a child process (its playbooks: the repository's and `playbookDirs`). */
export async function apiDepsForChild(child: ChildStack, playbookDirs: string[] = []): Promise<ApiDeps> {
  return apiDepsFromEnv(
    {
      ...child.info.env,
      STATE_MACHINE_ARN: child.info.stateMachineArn,
      SFN_ENDPOINT: child.info.sfnEndpoint,
    },
    playbookDirs.length > 0
      ? (await loadPlaybooks(discoveredDirs(playbookDirs))).registry
      : (await repoPlaybooks()).registry,
  );
}
