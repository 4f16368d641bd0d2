/**
 * The whole local stack for engine tests: DynamoDB Local, the Anchor-compatible browser
 * service (real Chromium), the demo sites, the local Lambda runner (real handlers in child
 * processes) and the local Step Functions runner running `statemachine/job.asl.json`.
 *
 * One stack per test file (`useEngineStack` registers beforeAll/afterAll), in a temp
 * directory, on free loopback ports, with short retry pauses. People act through the API's
 * own functions (`jobs.ts`), in this process, against the stack's Step Functions endpoint.
 * Every Chromium, DynamoDB Local and worker process the stack starts is checked to be gone
 * when the file ends (`processes.ts`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type SiteAdmin, siteAdmin } from '../../demo/sites/admin-client.ts';
import type { ApiDeps } from '../../lambdas/lib/api/deps.ts';
import { apiDepsFromEnv } from '../../lambdas/lib/api/runtime.ts';
import type { Ledger } from '../../lambdas/lib/ledger/index.ts';
import { bindClient } from '../../local/iam/index.ts';
import type { FaultPointEvent } from '../../local/lambda/events.ts';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.ts';
import { TEST_STACK_SETTINGS } from './fixtures.ts';
import { killQuietly, leftoverProcesses } from './processes.ts';

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
  /** The synthesized template whose IAM policies the functions are held to (default: the app's). */
  template?: string;
  /** Playbook folders besides `playbooks/` (as `npm start -- --playbooks`). */
  playbookDirs?: string[];
  /** Target applications besides the demo sites (as `npm start -- --applications`). */
  applications?: LocalStackOptions['applications'];
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
    ...(options.template ? { template: options.template } : {}),
    ...(options.playbookDirs ? { playbookDirs: options.playbookDirs } : {}),
    ...(options.applications ? { applications: options.applications } : {}),
  });
  const faultPoints: SeenFaultPoint[] = [];
  stack.lambdas.events.on('fault-point', (e) => faultPoints.push({ ...e, at: Date.now(), fired: false }));
  stack.lambdas.events.on('fault-fired', (e) => {
    const seen = faultPoints.findLast((p) => p.pid === e.pid && p.point === e.point);
    if (seen) seen.fired = true;
  });
  const api = await apiDepsFromEnv(
    {
      ...stack.env,
      STATE_MACHINE_ARN: stack.sfn.stateMachineArn,
      SFN_ENDPOINT: stack.sfnServer.endpoint,
    },
    stack.playbooks.registry,
  );
  // People act through the API's functions in this process: held to the API's policy, as in AWS.
  const apiPolicy = stack.iam.policies.specs.ApiHandler;
  if (!apiPolicy) throw new Error('the template has no policy for ApiHandler');
  bindClient(api.doc, apiPolicy);
  bindClient(api.sfn, apiPolicy);
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

/** The stacks this test process runs (a file may use several, one per configuration). */
const running = new Set<EngineStack>();

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
  running.delete(engine);
  const workers = new Set<number>(stack.lambdas.workers().map((w) => w.pid));
  engine.api.sfn.destroy();
  engine.api.doc.destroy();
  await stack.stop({ endSessions: true });
  const others = [...running];
  const left = await leftoverProcesses(workers, engine.dataDir, 10_000, {
    dataDirs: others.map((o) => o.dataDir),
    workerPids: new Set(others.flatMap((o) => o.stack.lambdas.workers().map((w) => w.pid))),
  });
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

/**
 * Registers beforeAll/afterAll for one stack shared by the tests of a file. `options` may be a
 * function, called when the stack starts (after the file's earlier `beforeAll`s: a site of the
 * test's own is running by then).
 */
export function useEngineStack(
  options: EngineStackOptions | (() => EngineStackOptions) = {},
): () => EngineStack {
  let engine: EngineStack | undefined;
  beforeAll(async () => {
    engine = await startEngineStack(typeof options === 'function' ? options() : options);
    running.add(engine);
  }, 180_000);
  afterAll(async () => {
    if (engine) await stopEngineStack(engine);
  }, 120_000);
  return () => {
    if (!engine) throw new Error('the engine stack is not started: use it inside a test');
    return engine;
  };
}
