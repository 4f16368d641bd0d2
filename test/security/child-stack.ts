/**
 * The local stack in a child process whose every output line is captured: the stack's own
 * (API server, browser service, demo sites) and its Lambda workers' (their stdout and
 * stderr are inherited, so they land in the same pipes). Stopped with SIGTERM; whatever it
 * started is checked to be gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { LocalStackOptions } from '../../local/stack.ts';
import { leftoverProcesses, TEST_STACK_SETTINGS } from '../support/stack.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

const SCRIPT = `
import { startLocalStack } from ${JSON.stringify(`${REPO_ROOT}/local/stack.ts`)};
const stack = await startLocalStack(JSON.parse(process.argv[2]));
process.stdout.write(JSON.stringify({
  ready: true,
  apiUrl: stack.apiUrl,
  demoApiKey: stack.demoApiKey,
  env: stack.env,
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

export interface ChildInfo {
  apiUrl: string;
  demoApiKey: string;
  env: Record<string, string>;
  shopUrl: string;
  adminToken: string;
}

export interface CapturedStack {
  info: ChildInfo;
  dataDir: string;
  /** Every line the stack and its workers wrote so far (stdout and stderr). */
  lines(): string[];
  /** SIGTERM, wait for the exit, then check nothing it started still runs (leftovers are killed and reported). */
  stop(): Promise<void>;
}

/** Starts the stack with `env` for its handlers, capturing everything it prints. */
export async function startCapturedStack(
  env: Record<string, string>,
  timeoutMs = 180_000,
): Promise<CapturedStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-security-'));
  const script = join(dataDir, 'child-stack.mts');
  await writeFile(script, SCRIPT);
  const options: LocalStackOptions = {
    ...TEST_STACK_SETTINGS,
    waitTimeOverrides: { ...TEST_STACK_SETTINGS.waitTimeOverrides },
    env: { ...TEST_STACK_SETTINGS.env, ...env },
    dataDir,
    ports: { anchor: 0, shop: 0, crm: 0, billing: 0, dynamodb: 0, sfn: 0 },
    apiPort: 0,
    workerOutput: 'inherit',
    resume: false,
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(options)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const partial = { stdout: '', stderr: '' };
  const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const text = partial[stream] + chunk.toString('utf8');
    const parts = text.split('\n');
    partial[stream] = parts.pop() ?? '';
    lines.push(...parts);
  };
  child.stdout?.on('data', take('stdout'));
  child.stderr?.on('data', take('stderr'));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));

  const info = await new Promise<ChildInfo>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`the stack did not start:\n${lines.slice(-20).join('\n')}`)),
      timeoutMs,
    );
    const check = setInterval(() => {
      const line = lines.find((l) => l.startsWith('{"ready":true'));
      if (line) {
        clearInterval(check);
        clearTimeout(timer);
        done(JSON.parse(line) as ChildInfo);
      }
    }, 100);
    child.once('exit', (code, signal) => {
      clearInterval(check);
      clearTimeout(timer);
      fail(
        new Error(
          `the stack exited (${code ?? signal}) before it was ready:\n${lines.slice(-20).join('\n')}`,
        ),
      );
    });
  });

  return {
    info,
    dataDir,
    lines: () => [...lines, partial.stdout, partial.stderr].filter((l) => l !== ''),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000));
      if ((await Promise.race([exited, timeout])) === 'timeout') {
        child.kill('SIGKILL');
        await exited;
      }
      const left = await leftoverProcesses(new Set(child.pid ? [child.pid] : []), dataDir);
      for (const p of left) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      if (left.length > 0) {
        throw new Error(
          `still running after the stack stopped:\n${left.map((p) => `${p.pid} ${p.cmdline.slice(0, 160)}`).join('\n')}`,
        );
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
