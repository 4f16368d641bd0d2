/**
 * Running `checkout@1` through Belay for the benchmark: a local stack with its history events
 * on a hub, and a driver that submits a job through the HTTP API, approves place-order through
 * the API the moment it is asked (a person who answers at once), waits for the execution to
 * end and reads what the job cost from the ledger and the execution history.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import { isTerminal } from '../../lambdas/lib/ledger/status.ts';
import type { JobStatus } from '../../lambdas/lib/ledger/types.ts';
import type { LambdaRuntime } from '../../local/lambda/types.ts';
import { createProgressTracker } from '../../local/progress.ts';
import type { HistoryEvent } from '../../local/sfn/index.ts';
import { localFunctionArn, startLocalStack } from '../../local/stack.ts';
import { measure } from './measure.ts';
import type { ApiCall, BelayRun, BenchStack } from './types.ts';

export type { ApiCall, BelayRun, BenchStack } from './types.ts';

/** Starts a fresh local stack under `dataDir` on free ports, browser cap 5 (plan `free`). */
export async function startBenchStack(options: {
  dataDir: string;
  mode: 'warm' | 'cold';
  log: (line: string) => void;
  /** Added to the functions' environment. */
  env?: Record<string, string>;
  /** The Node the functions run on (default: this process's). */
  lambdaRuntime?: LambdaRuntime;
}): Promise<BenchStack> {
  const events = new EventEmitter<{ history: [HistoryEvent] }>();
  events.setMaxListeners(100);
  const stack = await startLocalStack({
    dataDir: join(options.dataDir, options.mode),
    fresh: true,
    ports: { anchor: 0, shop: 0, crm: 0, billing: 0 },
    apiPort: 0,
    lambdaMode: options.mode,
    resume: false,
    env: { BELAY_DEFAULT_PLAN: 'free', ...options.env },
    log: (line) => options.log(`  [${options.mode} stack] ${line}`),
    onHistoryEvent: (event) => events.emit('history', event),
    ...(options.lambdaRuntime ? { lambdaRuntime: options.lambdaRuntime } : {}),
  });
  return { stack, mode: options.mode, events, api: apiClient(stack.apiUrl as string, stack.demoApiKey) };
}

function apiClient(baseUrl: string, apiKey: string): ApiCall {
  return async (method, path, body) => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      // Rate limited: wait as told (a person's client would), a few times.
      if (res.status === 429 && attempt < 10) {
        await sleep(Number(res.headers.get('retry-after') ?? '1') * 1000);
        continue;
      }
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    }
  };
}

const CHECKOUT_BODY = JSON.parse(
  readFileSync(new URL('../../demo/jobs/checkout.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

/** Another job than checkout@1: its request (playbook, inputs, accounts) and where its crash is injected. */
export interface BenchJob {
  /** The job request without `jobId`. */
  body: Record<string, unknown>;
  /** The fault point that kills the RunStep worker in `crashAtStep` (default `mid-action`). */
  point?: FaultPoint;
  /** With an agent step's points: the action number it fires at. */
  action?: number;
}

/**
 * Submits checkout@1 (or `job`) as `jobId` on `accountId`, approves any approval at once,
 * waits for the end. With `crashAtStep` the RunStep worker is SIGKILLed mid-action in that step
 * (1-based), or at `job.point`.
 */
export async function runBelayJob(
  b: BenchStack,
  options: {
    jobId: string;
    accountId: string;
    crashAtStep?: number;
    timeoutMs: number;
    /** Progress lines of the job (verbose mode). */
    progress?: (line: string) => void;
    job?: BenchJob;
  },
): Promise<BelayRun> {
  const { stack, api } = b;
  const { jobId } = options;
  const track = createProgressTracker();
  const executions = new Set<string>();
  let crashes = 0;
  const onFault = (e: { info: { jobId?: string } }): void => {
    if (e.info.jobId === jobId) crashes++;
  };
  let approving: Promise<void> | undefined;
  let approvalError: unknown;
  let settle: ((status: string) => void) | undefined;
  const ended = new Promise<string>((ok) => {
    settle = ok;
  });
  const onHistory = (event: HistoryEvent): void => {
    const line = track(event);
    if (!line || line.jobId !== jobId) return;
    options.progress?.(`${jobId}: ${line.text}`);
    executions.add(event.executionArn);
    if (line.kind === 'wait' && line.state === 'AwaitApproval' && !approving) {
      approving = approve(api, jobId).catch((err: unknown) => {
        approvalError = err;
        settle?.('approval failed');
      });
    }
    if (event.type === 'ExecutionSucceeded') settle?.('ended');
    if (event.type === 'ExecutionFailed') settle?.('failed');
  };
  b.events.on('history', onHistory);
  if (options.crashAtStep) stack.lambdas.events.on('fault-fired', onFault);
  try {
    if (options.crashAtStep) {
      const action = options.job?.action;
      stack.lambdas.arm({
        functionName: localFunctionArn('RunStep'),
        point: options.job?.point ?? 'mid-action',
        match: { jobId, stepIndex: options.crashAtStep - 1, ...(action === undefined ? {} : { action }) },
      });
    }
    const submitted = await api(
      'POST',
      '/jobs',
      options.job
        ? { ...options.job.body, jobId }
        : { ...CHECKOUT_BODY, jobId, accounts: { shop: options.accountId } },
    );
    if (submitted.status !== 202)
      throw new Error(`submit ${jobId}: HTTP ${submitted.status} ${JSON.stringify(submitted.body)}`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((ok) => {
      timer = setTimeout(() => ok('timeout'), options.timeoutMs);
    });
    const how = await Promise.race([ended, timeout]).finally(() => clearTimeout(timer));
    if (how === 'timeout') throw new Error(`${jobId} did not end within ${options.timeoutMs / 1000} s`);
    await approving;
    if (approvalError) throw approvalError;
    return await measure(b, jobId, [...executions], crashes);
  } finally {
    b.events.off('history', onHistory);
    if (options.crashAtStep) {
      stack.lambdas.events.off('fault-fired', onFault);
      stack.lambdas.disarm();
    }
  }
}

/** Polls the job until it waits for approval, then approves through the API. */
async function approve(api: ApiCall, jobId: string): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  let seen = 'nothing';
  while (Date.now() < deadline) {
    const res = await api('GET', `/jobs/${jobId}`);
    const job = res.body.job as { status?: string; wait?: { step?: string } | null } | undefined;
    seen = `HTTP ${res.status} status ${job?.status} wait ${JSON.stringify(job?.wait ?? null)}`;
    if (job?.status === 'WAITING_APPROVAL' && job.wait?.step) {
      const decided = await api('POST', `/jobs/${jobId}/decisions`, {
        step: job.wait.step,
        decision: 'approve',
        comment: 'benchmark: approved at once',
      });
      if (decided.status >= 300)
        throw new Error(
          `approval of ${jobId} refused: HTTP ${decided.status} ${JSON.stringify(decided.body)}`,
        );
      return;
    }
    if (job && isTerminal(job.status as JobStatus)) break;
    await sleep(50);
  }
  throw new Error(`${jobId} never waited for approval (last seen: ${seen})`);
}
