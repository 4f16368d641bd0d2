/**
 * The local stack in a child process whose every output line is captured: the stack's own
 * (API server, browser service, demo sites) and its Lambda workers' (their stdout and
 * stderr are inherited, so they land in the same pipes). Stopped with SIGTERM; whatever it
 * started is checked to be gone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StackProcessInfo, startStackProcess } from '../../support/child-stack.ts';
import { leftoverProcesses } from '../../support/processes.ts';

export type ChildInfo = Pick<StackProcessInfo, 'apiUrl' | 'demoApiKey' | 'env' | 'shopUrl' | 'adminToken'>;

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
  const { child, info, lines, exited } = await startStackProcess(
    {
      env,
      dataDir,
      ports: { anchor: 0, shop: 0, crm: 0, billing: 0, dynamodb: 0, sfn: 0 },
      apiPort: 0,
      workerOutput: 'inherit',
      resume: false,
    },
    timeoutMs,
  );

  return {
    info,
    dataDir,
    lines,
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
