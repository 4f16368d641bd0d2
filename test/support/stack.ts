/**
 * The whole local stack for engine tests: DynamoDB Local, the Anchor-compatible browser
 * service (real Chromium), the demo sites, the local Lambda runner (real handlers in child
 * processes) and the local Step Functions runner running `statemachine/job.asl.json`.
 *
 * One stack per test file (`useEngineStack` registers beforeAll/afterAll), in a temp
 * directory, on free loopback ports, with short retry pauses. People act through the API's
 * own functions (`submitJob`, `decide`, `completeMfa`), in this process, against the
 * stack's Step Functions endpoint. Every Chromium, DynamoDB Local and worker process the
 * stack starts is checked to be gone when the file ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type SiteAdmin, siteAdmin } from '../../demo/sites/admin-client.ts';
import type { ApiDeps } from '../../lambdas/lib/api/deps.ts';
import { decide } from '../../lambdas/lib/api/jobs/decide.ts';
import { completeMfa } from '../../lambdas/lib/api/jobs/mfa.ts';
import { submitJob } from '../../lambdas/lib/api/jobs/submit.ts';
import { apiDepsFromEnv } from '../../lambdas/lib/api/runtime.ts';
import type { Principal } from '../../lambdas/lib/auth/api-keys.ts';
import { executionName } from '../../lambdas/lib/engine/executions.ts';
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import {
  type Job,
  type JobStatus,
  type Ledger,
  type LedgerEntry,
  TERMINAL_STATUSES,
} from '../../lambdas/lib/ledger/index.ts';
import type { CheckoutInputs } from '../../lambdas/lib/playbooks/checkout/index.ts';
import type { CrmBillingSyncInputs } from '../../lambdas/lib/playbooks/crm-billing-sync/index.ts';
import type { FaultPointEvent } from '../../local/lambda/events.ts';
import { WORKER_COMMAND_LINE } from '../../local/lambda/worker-process.ts';
import { isRunning, type ProcessInfo, processes } from '../../local/processes.ts';
import type { HistoryEvent } from '../../local/sfn/types.ts';
import {
  type LocalStack,
  type LocalStackOptions,
  localFunctionArn,
  startLocalStack,
} from '../../local/stack.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

export const TENANT = 'demo';
export const RUN_STEP = 'belay-run-step';

/** The person acting through the API in these tests (submitter and approver of the demo tenant). */
export const PERSON: Principal = {
  tenantId: TENANT,
  roles: ['submitter', 'approver'],
  keyId: 'blk_e2e0engine0',
};

/** `checkout@1` step ids, in order (place-order, index 13, is the one write). */
export const CHECKOUT_STEPS = [
  'open-shop',
  'sign-in',
  'search',
  'add-item-a',
  'add-item-b',
  'set-quantity',
  'open-cart',
  'start-checkout',
  'shipping-address',
  'shipping-method',
  'apply-promo',
  'payment-details',
  'review',
  'place-order',
] as const;
export const PLACE_ORDER = 13;

export const CHECKOUT_INPUTS: CheckoutInputs = {
  search: 'mug',
  items: [
    { sku: 'MUG-ENAMEL-BLU', quantity: 2 },
    { sku: 'MUG-STONE-GRY', quantity: 1 },
  ],
  shippingAddress: {
    name: 'Ada Lovelace',
    line1: '12 St James Sq',
    city: 'London',
    postcode: 'SW1Y 4JH',
    country: 'GB',
  },
  shippingMethod: 'standard',
  promoCode: 'SAVE10',
  payment: { savedCardLast4: '4242' },
};

export const SYNC_INPUTS: CrmBillingSyncInputs = {
  customerEmail: 'mei.chen@cobalt.example',
  address: { line1: '77 Temple Quay', city: 'Bristol', postcode: 'BS1 6DZ', country: 'GB' },
  phone: '+44 117 496 0999',
};

/** Settings every engine test stack runs with: short pauses, so a retry costs milliseconds. */
export const TEST_STACK_SETTINGS = {
  lambdaMode: 'warm',
  retryIntervalMs: 150,
  waitTimeOverrides: { RetryBackoff: 200, WaitForCapacity: 500 },
  env: { BELAY_RETRY_BACKOFF_SECONDS: '0', BELAY_CAPACITY_POLL_SECONDS: '1', LOG_LEVEL: 'error' },
} as const satisfies Partial<LocalStackOptions>;

/** A fault point a worker reached, with the time the runner saw it. */
export interface SeenFaultPoint extends FaultPointEvent {
  at: number;
  fired: boolean;
}

export interface EngineStack {
  stack: LocalStack;
  ledger: Ledger;
  /** The API's dependencies, against this stack (its Step Functions endpoint and table). */
  api: ApiDeps;
  shop: SiteAdmin;
  crm: SiteAdmin;
  billing: SiteAdmin;
  /** Every fault point reached so far (RunStep's before/after/during points, the playbooks' mid-action). */
  faultPoints: SeenFaultPoint[];
  dataDir: string;
}

/** What acting on and watching jobs needs: the API's functions and the ledger (and, for diagnoses, the stack). */
export interface JobsClient {
  api: ApiDeps;
  ledger: Ledger;
  stack?: LocalStack;
}

export interface EngineStackOptions {
  dataDir?: string;
  ports?: LocalStackOptions['ports'];
  resume?: boolean;
  /** Added to the handlers' environment (over `TEST_STACK_SETTINGS.env`). */
  env?: Record<string, string>;
}

/** Starts a stack in `dataDir` (a new temp directory by default) on free ports. */
export async function startEngineStack(options: EngineStackOptions = {}): Promise<EngineStack> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'belay-engine-')));
  const stack = await startLocalStack({
    ...TEST_STACK_SETTINGS,
    waitTimeOverrides: { ...TEST_STACK_SETTINGS.waitTimeOverrides },
    env: { ...TEST_STACK_SETTINGS.env, ...options.env },
    dataDir,
    ports: { anchor: 0, shop: 0, crm: 0, billing: 0, dynamodb: 0, sfn: 0, ...options.ports },
    resume: options.resume ?? true,
  });
  const faultPoints: SeenFaultPoint[] = [];
  stack.lambdas.events.on('fault-point', (e) => faultPoints.push({ ...e, at: Date.now(), fired: false }));
  stack.lambdas.events.on('fault-fired', (e) => {
    const seen = faultPoints.findLast((p) => p.pid === e.pid && p.point === e.point);
    if (seen) seen.fired = true;
  });
  const api = await apiDepsFromEnv({
    ...stack.env,
    STATE_MACHINE_ARN: stack.sfn.stateMachineArn,
    SFN_ENDPOINT: stack.sfnServer.endpoint,
  });
  const { adminToken } = stack.sites;
  return {
    stack,
    ledger: stack.ledger,
    api,
    shop: siteAdmin(stack.sites.shop.baseUrl, adminToken),
    crm: siteAdmin(stack.sites.crm.baseUrl, adminToken),
    billing: siteAdmin(stack.sites.billing.baseUrl, adminToken),
    faultPoints,
    dataDir,
  };
}

/**
 * Stops the stack (ending its browser sessions) and checks that nothing it started is still
 * running: Chromium (by PID and by its user-data-dir under the data directory), DynamoDB
 * Local, every worker. Leftovers are killed by PID and reported as an error.
 */
export async function stopEngineStack(
  engine: EngineStack,
  options: { removeDataDir?: boolean } = {},
): Promise<void> {
  const { stack } = engine;
  const workers = new Set<number>(stack.lambdas.workers().map((w) => w.pid));
  engine.api.sfn.destroy();
  engine.api.doc.destroy();
  await stack.stop({ endSessions: true });
  const left = await leftoverProcesses(workers, engine.dataDir);
  if (options.removeDataDir !== false && left.length === 0) {
    await rm(engine.dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
  if (left.length > 0) {
    for (const p of left) killQuietly(p.pid);
    throw new Error(
      `processes still running after the stack stopped:\n${left.map((p) => `  ${p.pid} ${p.cmdline.slice(0, 160)}`).join('\n')}`,
    );
  }
}

/** Registers beforeAll/afterAll for one stack shared by the tests of a file. */
export function useEngineStack(options: EngineStackOptions = {}): () => EngineStack {
  let engine: EngineStack | undefined;
  beforeAll(async () => {
    engine = await startEngineStack(options);
  }, 180_000);
  afterAll(async () => {
    if (engine) await stopEngineStack(engine);
  }, 120_000);
  return () => {
    if (!engine) throw new Error('the engine stack is not started: use it inside a test');
    return engine;
  };
}

// ---------------------------------------------------------------------------------------
// Processes

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
function liveProcesses(workerPids: ReadonlySet<number>, dataDir: string): ProcessInfo[] {
  return processes().filter(
    (info) =>
      info.pid !== process.pid &&
      ((dataDir.length > 1 && info.cmdline.includes(dataDir)) ||
        (workerPids.has(info.pid) && WORKER_COMMAND_LINE.test(info.cmdline)) ||
        (info.ppid === process.pid &&
          (/chromium|java/.test(info.cmdline) || WORKER_COMMAND_LINE.test(info.cmdline)))),
  );
}

/** Waits (up to `timeoutMs`) for the processes to exit; returns those still running. */
export async function leftoverProcesses(
  workerPids: ReadonlySet<number>,
  dataDir: string,
  timeoutMs = 10_000,
): Promise<ProcessInfo[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = liveProcesses(workerPids, dataDir);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(200);
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------
// Jobs: submitted and answered through the API's own functions

export interface SubmitOptions {
  jobId: string;
  account?: string;
  approvals?: string[];
  inputs?: CheckoutInputs;
  retryBudget?: number;
}

/** Submits a `checkout@1` job (through `submitJob`, which also starts its execution). */
export async function submitCheckout(engine: JobsClient, options: SubmitOptions): Promise<Job> {
  const { job } = await submitJob(
    engine.api,
    PERSON,
    {
      jobId: options.jobId,
      playbook: 'checkout@1',
      inputs: options.inputs ?? CHECKOUT_INPUTS,
      accounts: { shop: options.account ?? 'acct_demo_shop' },
      ...(options.approvals ? { approvals: options.approvals } : {}),
      ...(options.retryBudget !== undefined ? { retryBudget: options.retryBudget } : {}),
    },
    undefined,
  );
  return job;
}

/** Submits a `crm-billing-sync@1` job. */
export async function submitSync(engine: JobsClient, jobId: string): Promise<Job> {
  const { job } = await submitJob(
    engine.api,
    PERSON,
    {
      jobId,
      playbook: 'crm-billing-sync@1',
      inputs: SYNC_INPUTS,
      accounts: { crm: 'acct_demo_crm', billing: 'acct_demo_billing' },
    },
    undefined,
  );
  return job;
}

/** Approves (or, for a review, resolves) the step the job waits at, as a person through the API. */
export async function approve(
  engine: JobsClient,
  jobId: string,
  step: string,
  resolution?: 'done' | 'absent',
): Promise<void> {
  const result = await decide(engine.api, PERSON, jobId, {
    step,
    decision: 'approve',
    ...(resolution ? { resolution } : {}),
  });
  if (!result.resumed) throw new Error(`approving ${jobId} at ${step} resumed nothing`);
}

/** Sends a one-time code for the job's WAITING_MFA sign-in, as a person through the API. */
export async function sendCode(engine: JobsClient, jobId: string, code: string): Promise<void> {
  const result = await completeMfa(engine.api, PERSON, jobId, { code });
  if (!result.resumed) throw new Error(`the code for ${jobId} resumed nothing`);
}

// ---------------------------------------------------------------------------------------
// Waiting, with bounded timeouts and a diagnosis when they run out

export interface JobView {
  job: Job;
  entries: LedgerEntry[];
}

export type JobCondition = (view: JobView) => boolean;

export const statusIs =
  (...statuses: JobStatus[]): JobCondition =>
  ({ job }) =>
    statuses.includes(job.status);

export const waitingAt =
  (kind: 'approval' | 'mfa' | 'review', step: string): JobCondition =>
  ({ job }) =>
    job.wait?.kind === kind && job.wait.step === step;

export const reached =
  (nextStep: number): JobCondition =>
  ({ job }) =>
    job.nextStep >= nextStep;

/** Executions of the job (every generation), newest first. */
export function executionsOf(
  engine: Pick<EngineStack, 'stack'>,
  jobId: string,
): ReturnType<LocalStack['sfn']['listExecutions']> {
  const prefix = executionName(TENANT, jobId, 0).replace(/-g0$/, '-g');
  return engine.stack.sfn.listExecutions().filter((e) => e.name.startsWith(prefix));
}

/** The history of the job's newest execution. */
export function historyOf(engine: EngineStack, jobId: string): HistoryEvent[] {
  const latest = executionsOf(engine, jobId)[0];
  if (!latest) throw new Error(`job ${jobId} has no execution`);
  return engine.stack.sfn.getExecutionHistory(latest.executionArn);
}

/** What went on with a job, for a failure message: status, wait, last entries, executions and their errors. */
export async function diagnose(engine: JobsClient, jobId: string): Promise<string> {
  const lines: string[] = [];
  try {
    const { job, entries } = await engine.ledger.readJob(TENANT, jobId);
    lines.push(
      `job ${jobId}: ${job.status} nextStep=${job.nextStep} wait=${job.wait ? `${job.wait.kind}@${job.wait.step}` : '-'} retries=${job.retriesUsed}${job.failure ? ` failure=${JSON.stringify(job.failure)}` : ''}`,
    );
    for (const e of entries.slice(-20)) {
      lines.push(
        `  ${e.at} ${e.type} ${e.step ?? ''} ${JSON.stringify(e.detail ?? e.evidence ?? {}).slice(0, 240)}`,
      );
    }
  } catch (err) {
    lines.push(`job ${jobId}: cannot read the ledger: ${String(err)}`);
  }
  const { stack } = engine;
  if (!stack) return lines.join('\n');
  for (const x of executionsOf({ stack }, jobId)) {
    const d = stack.sfn.describeExecution(x.executionArn);
    lines.push(`  execution ${d.name}: ${d.status} ${d.error ?? ''} ${(d.cause ?? '').slice(0, 400)}`);
    const failures = stack.sfn
      .getExecutionHistory(x.executionArn)
      .filter((h) => h.lambdaFunctionFailedEventDetails || h.taskFailedEventDetails)
      .slice(-5);
    for (const h of failures) {
      const f = h.lambdaFunctionFailedEventDetails ?? h.taskFailedEventDetails;
      lines.push(`    ${h.type}: ${f?.error ?? ''} ${(f?.cause ?? '').slice(0, 300)}`);
    }
    const outputs = stack.sfn
      .getExecutionHistory(x.executionArn)
      .filter((h) => h.lambdaFunctionSucceededEventDetails)
      .slice(-4);
    for (const h of outputs) {
      lines.push(`    returned: ${(h.lambdaFunctionSucceededEventDetails?.output ?? '').slice(0, 300)}`);
    }
  }
  return lines.join('\n');
}

/**
 * Polls the ledger until `condition` holds. Throws (with a diagnosis) when `timeoutMs` runs
 * out, or when the job ends without the condition holding.
 */
export async function waitForJob(
  engine: JobsClient,
  jobId: string,
  condition: JobCondition,
  options: { timeoutMs?: number; what?: string; pollMs?: number } = {},
): Promise<JobView> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await engine.ledger.readJob(TENANT, jobId);
    if (condition(view)) return view;
    const ended = TERMINAL_STATUSES.includes(view.job.status);
    if (ended || Date.now() > deadline) {
      throw new Error(
        `${ended ? 'job ended' : `timed out after ${timeoutMs} ms`} waiting for ${options.what ?? 'the condition'}\n${await diagnose(engine, jobId)}`,
      );
    }
    await sleep(options.pollMs ?? 250);
  }
}

/**
 * Runs a job to its end: approves the waits at `approveSteps` as they come; any other wait
 * (or a failure) throws with a diagnosis. Resolves with the final view once the job is
 * SUCCEEDED and its execution closed.
 */
export async function runToSuccess(
  engine: EngineStack,
  jobId: string,
  options: { approveSteps?: readonly string[]; timeoutMs?: number } = {},
): Promise<JobView> {
  const approveSteps = options.approveSteps ?? ['place-order'];
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    const view = await waitForJob(
      engine,
      jobId,
      ({ job }) => job.status === 'SUCCEEDED' || job.wait !== undefined,
      { timeoutMs: Math.max(1_000, deadline - Date.now()), what: 'SUCCEEDED' },
    );
    const { job } = view;
    if (job.status === 'SUCCEEDED') {
      await waitForExecutionEnd(engine, jobId, Math.max(1_000, deadline - Date.now()));
      return engine.ledger.readJob(TENANT, jobId);
    }
    const wait = job.wait;
    if (wait?.kind === 'approval' && approveSteps.includes(wait.step)) {
      await approve(engine, jobId, wait.step);
      continue;
    }
    throw new Error(
      `job ${jobId} waits for ${wait?.kind} at ${wait?.step} (${wait?.reason ?? ''})\n${await diagnose(engine, jobId)}`,
    );
  }
}

/** Waits for the job's newest execution to close; returns its description. */
export async function waitForExecutionEnd(
  engine: EngineStack,
  jobId: string,
  timeoutMs = 60_000,
): Promise<ReturnType<LocalStack['sfn']['describeExecution']>> {
  const latest = executionsOf(engine, jobId)[0];
  if (!latest) throw new Error(`job ${jobId} has no execution`);
  return engine.stack.sfn.waitForExecution(latest.executionArn, timeoutMs);
}

// ---------------------------------------------------------------------------------------
// Reading the ledger and the fault points

export const ofType = (entries: readonly LedgerEntry[], type: LedgerEntry['type']): LedgerEntry[] =>
  entries.filter((e) => e.type === type);

/** Step ids of the `step-completed` entries, in ledger order. */
export const completedSteps = (entries: readonly LedgerEntry[]): string[] =>
  ofType(entries, 'step-completed').map((e) => e.step ?? '?');

/** RunStep's fault points for one job. */
export function runStepPoints(engine: EngineStack, jobId: string, point?: FaultPoint): SeenFaultPoint[] {
  return engine.faultPoints.filter(
    (p) =>
      p.functionName === RUN_STEP && p.info.jobId === jobId && (point === undefined || p.point === point),
  );
}

/**
 * How many times each step's action ran: RunStep reaches `before-action` once per execution
 * of a step's action, just before it acts (after the intent, for a write).
 */
export function executionsPerStep(engine: EngineStack, jobId: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const p of runStepPoints(engine, jobId, 'before-action')) {
    const i = p.info.stepIndex ?? -1;
    counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  return counts;
}

/**
 * Actions that started after their step had been completed in the ledger: a completed
 * step executed again (lost progress). Each is described; the list should be empty.
 */
export function reExecutedAfterCompletion(
  engine: EngineStack,
  jobId: string,
  entries: readonly LedgerEntry[],
): string[] {
  const completedAt = new Map<string, number>();
  for (const e of ofType(entries, 'step-completed')) {
    if (e.step && !completedAt.has(e.step)) completedAt.set(e.step, Date.parse(e.at));
  }
  return runStepPoints(engine, jobId, 'before-action')
    .filter((p) => {
      const done = p.info.step ? completedAt.get(p.info.step) : undefined;
      return done !== undefined && p.at > done;
    })
    .map(
      (p) =>
        `${p.info.step} (#${p.info.stepIndex}) ran at ${new Date(p.at).toISOString()} after its completion`,
    );
}

/** Arms a SIGKILL of the RunStep worker of `jobId` at `point` of step `stepIndex`. */
export function armKill(engine: EngineStack, jobId: string, stepIndex: number, point: FaultPoint): void {
  engine.stack.lambdas.arm({
    functionName: localFunctionArn('RunStep'),
    point,
    match: { jobId, stepIndex },
    times: 1,
  });
}

/** The job's running browser session for `app` in the browser service (found by the job's tag). */
export function liveSessionOf(engine: EngineStack, jobId: string, app = 'shop'): string | undefined {
  return engine.stack.anchor
    .sessions()
    .find(
      (s) =>
        s.status === 'running' &&
        Array.isArray(s.tags) &&
        s.tags.includes(`jobId:${jobId}`) &&
        s.tags.includes(`application:${app}`),
    )?.id;
}

/**
 * SIGKILLs the job's browser when its RunStep worker reaches `point` of step `stepIndex`,
 * before the worker goes on (the runner acks a fault point only after its listeners ran).
 * Resolves with the killed session once it happened.
 */
export function killBrowserAt(
  engine: EngineStack,
  jobId: string,
  stepIndex: number,
  point: FaultPoint,
): Promise<{ sessionId: string; at: number }> {
  const events = engine.stack.lambdas.events;
  return new Promise((done, fail) => {
    const listener = (e: FaultPointEvent): void => {
      if (e.functionName !== RUN_STEP || e.info.jobId !== jobId) return;
      if (e.info.stepIndex !== stepIndex || e.point !== point) return;
      events.off('fault-point', listener);
      const sessionId = liveSessionOf(engine, jobId);
      if (!sessionId) {
        fail(new Error(`job ${jobId} has no running browser session at ${point} of step ${stepIndex}`));
        return;
      }
      const at = Date.now();
      // The SIGKILL is sent synchronously, before the worker is let past the point.
      engine.stack.anchor.killBrowser(sessionId).then(() => done({ sessionId, at }), fail);
    };
    events.on('fault-point', listener);
  });
}

/**
 * SIGKILLs the job's browser `delayMs` after RunStep starts working on step `stepIndex`
 * (the invocation that follows the previous step's checkpoint, on the same warm worker): the
 * kill lands while the step reattaches and checks its page, an arbitrary instant mid-step.
 */
export function killBrowserAsStepStarts(
  engine: EngineStack,
  jobId: string,
  stepIndex: number,
  delayMs: number,
): Promise<{ sessionId: string; at: number }> {
  const events = engine.stack.lambdas.events;
  return new Promise((done, fail) => {
    let worker: number | undefined;
    const onPoint = (e: FaultPointEvent): void => {
      if (e.functionName !== RUN_STEP || e.info.jobId !== jobId) return;
      if (e.info.stepIndex === stepIndex - 1 && e.point === 'during-checkpoint') worker = e.pid;
    };
    const onStart = (e: { functionName: string; pid: number }): void => {
      if (worker === undefined || e.functionName !== RUN_STEP || e.pid !== worker) return;
      events.off('fault-point', onPoint);
      events.off('invocation-started', onStart);
      setTimeout(() => {
        const sessionId = liveSessionOf(engine, jobId);
        if (!sessionId) {
          fail(new Error(`job ${jobId} has no running browser session at step ${stepIndex}`));
          return;
        }
        const at = Date.now();
        engine.stack.anchor.killBrowser(sessionId).then(() => done({ sessionId, at }), fail);
      }, delayMs);
    };
    events.on('fault-point', onPoint);
    events.on('invocation-started', onStart);
  });
}

// ---------------------------------------------------------------------------------------
// The demo sites' own records

/**
 * A demo site's own persisted state (`<dataDir>/sites/<site>.json`, written through on every
 * change): the records behind its pages (orders with their lines, customer records, billing
 * accounts), for what the admin summary does not show.
 */
export function siteData<T>(engine: Pick<EngineStack, 'dataDir'>, site: 'shop' | 'crm' | 'billing'): T {
  const state = JSON.parse(readFileSync(join(engine.dataDir, 'sites', `${site}.json`), 'utf8')) as {
    data: T;
  };
  return state.data;
}

// ---------------------------------------------------------------------------------------
// A stack in a child process, to be SIGKILLed like a crashed machine (or stopped with SIGTERM)

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
): Promise<ChildStack> {
  const { child, info, exited } = await startStackProcess({ dataDir, ports, resume: true }, timeoutMs);
  return {
    child,
    info,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** API dependencies against a stack running in a child process. */
export function apiDepsForChild(child: ChildStack): Promise<ApiDeps> {
  return apiDepsFromEnv({
    ...child.info.env,
    STATE_MACHINE_ARN: child.info.stateMachineArn,
    SFN_ENDPOINT: child.info.sfnEndpoint,
  });
}
