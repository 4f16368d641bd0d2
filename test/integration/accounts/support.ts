/**
 * The real local stack with its HTTP API, for the accounts, capacity, parking and cost
 * tests: DynamoDB Local, real Chromium behind the Anchor-compatible service, the demo
 * sites, the real handlers in worker processes and the real ASL, reached the way a user
 * reaches them (HTTP with an API key). Built on `test/support/stack.ts` (its EngineStack,
 * helpers and leftover-process check), with extra handler environment per file.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { DEMO_ACCOUNTS } from '../../../demo/accounts.ts';
import { createAnchorIdentities } from '../../../lambdas/lib/accounts/anchor-identities.ts';
import { createApiKeyStore, type Role } from '../../../lambdas/lib/auth/api-keys.ts';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import type { Job, JobStatus } from '../../../lambdas/lib/ledger/index.ts';
import { type EngineStack, startEngineStack, stopEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_INPUTS, sleep } from '../../support/fixtures.ts';
import { type CallResult, call } from '../api/support/http.ts';

export interface ApiStack extends EngineStack {
  apiUrl: string;
  /** The demo tenant's key (submitter, approver, admin). */
  demoKey: string;
}

/** Starts the stack with its API on a free port; `env` is added to the handlers' environment. */
export async function startApiStack(env: Record<string, string> = {}): Promise<ApiStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-accounts-'));
  const started = await startEngineStack({ dataDir, env, resume: false });
  const { apiUrl, demoApiKey } = started.stack;
  if (!apiUrl) throw new Error('the stack started without its API');
  return { ...started, apiUrl, demoKey: demoApiKey };
}

/** One stack for the tests of a file: started in beforeAll, stopped (and checked for leftovers) in afterAll. */
export function useApiStack(env: Record<string, string> = {}): () => ApiStack {
  let started: ApiStack | undefined;
  beforeAll(async () => {
    started = await startApiStack(env);
  }, 240_000);
  afterAll(async () => {
    if (started) await stopEngineStack(started);
  }, 120_000);
  return () => {
    if (!started) throw new Error('the stack is not started: use it inside a test');
    return started;
  };
}

/** An HTTP call to the stack's API with a key. */
export function api(
  s: ApiStack,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<CallResult> {
  return call(s.apiUrl, method, path, { key, ...(body === undefined ? {} : { body }) });
}

/** A key of another tenant (created with its tenant item and plan). */
export async function tenantKey(
  s: ApiStack,
  tenantId: string,
  roles: Role[] = ['submitter', 'approver', 'admin'],
  plan = 'free',
): Promise<string> {
  const keys = createApiKeyStore({ doc: s.stack.doc, tableName: s.stack.tableName });
  return (await keys.create(tenantId, roles, { label: `${tenantId} test`, plan })).apiKey;
}

/** Connects a demo shop account through `POST /accounts` (its credentials from `demo/accounts.ts`). */
export async function connectShopAccount(s: ApiStack, key: string, username: string): Promise<string> {
  const account = DEMO_ACCOUNTS.shop.find((a) => a.username === username);
  if (!account) throw new Error(`no demo shop account ${username}`);
  const res = await api(s, 'POST', '/accounts', key, {
    application: 'shop',
    label: `Shop (${account.displayName})`,
    credentials: { username: account.username, password: account.password },
  });
  if (res.status !== 201) throw new Error(`POST /accounts answered ${res.status}: ${res.text}`);
  return res.json.account.accountId as string;
}

/** Submits a `checkout@1` job through `POST /jobs`. */
export async function submitCheckoutApi(
  s: ApiStack,
  key: string,
  jobId: string,
  account: string,
  extra: Record<string, unknown> = {},
): Promise<CallResult> {
  const res = await api(s, 'POST', '/jobs', key, {
    jobId,
    playbook: 'checkout@1',
    inputs: CHECKOUT_INPUTS,
    accounts: { shop: account },
    ...extra,
  });
  if (res.status !== 202) throw new Error(`POST /jobs ${jobId} answered ${res.status}: ${res.text}`);
  return res;
}

/** Approves a waiting step through `POST /jobs/{id}/decisions`. */
export async function approveApi(s: ApiStack, key: string, jobId: string, step: string): Promise<CallResult> {
  const res = await api(s, 'POST', `/jobs/${jobId}/decisions`, key, { step, decision: 'approve' });
  if (res.status !== 200) throw new Error(`approving ${jobId} answered ${res.status}: ${res.text}`);
  return res;
}

/** The job a browser service session was opened for (its `jobId:` tag), or `''`. */
function jobIdOf(record: { tags?: unknown }): string {
  const tags = Array.isArray(record.tags) ? (record.tags as string[]) : [];
  return tags.find((t) => t.startsWith('jobId:'))?.slice('jobId:'.length) ?? '';
}

/** Browser sessions the service runs right now (status `running`), by the job tagged on them. */
export function runningSessions(s: ApiStack): { id: string; jobId: string; profile?: string }[] {
  return s.stack.anchor
    .sessions()
    .filter((r) => r.status === 'running')
    .map((r) => ({ id: r.id, jobId: jobIdOf(r), profile: r.profile?.name }));
}

/**
 * The most browser sessions of these jobs the browser service ran at once, from its own
 * records of when each session started and ended (exact, not sampled). A session that ends
 * at the instant another starts does not overlap it.
 */
export function peakSessions(s: ApiStack, jobIds: readonly string[]): { peak: number; jobs: string[] } {
  const wanted = new Set(jobIds);
  const events: { at: number; delta: 1 | -1; jobId: string }[] = [];
  for (const r of s.stack.anchor.sessions()) {
    const jobId = jobIdOf(r);
    if (!wanted.has(jobId)) continue;
    events.push({ at: Date.parse(r.createdAt), delta: 1, jobId });
    events.push({ at: r.endedAt ? Date.parse(r.endedAt) : Number.POSITIVE_INFINITY, delta: -1, jobId });
  }
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const alive = new Map<string, number>();
  let peak = 0;
  let jobs: string[] = [];
  for (const e of events) {
    alive.set(e.jobId, (alive.get(e.jobId) ?? 0) + e.delta);
    const running = [...alive.entries()].filter(([, n]) => n > 0).flatMap(([j, n]) => Array(n).fill(j));
    if (running.length > peak) {
      peak = running.length;
      jobs = running;
    }
  }
  return { peak, jobs };
}

/** Jobs of the tenant holding a live browser lease now. */
export async function leaseHolders(s: ApiStack, tenantId: string): Promise<string[]> {
  const capacity = createLeaseCapacity({ doc: s.stack.doc, tableName: s.stack.tableName });
  return (await capacity.status(tenantId)).leases.map((l) => l.jobId);
}

/** Polls a job of any tenant until it has `status` (throws after `timeoutMs`). */
export async function waitForStatus(
  s: ApiStack,
  tenantId: string,
  jobId: string,
  status: JobStatus,
  timeoutMs = 60_000,
): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await s.ledger.getJob(tenantId, jobId);
    if (job.status === status) return job;
    if (Date.now() > deadline)
      throw new Error(`job ${jobId} is ${job.status}, not ${status}, after ${timeoutMs} ms`);
    await sleep(250);
  }
}

/**
 * A new identity of `application` at the stack's Anchor service, in Belay's Anchor application for
 * it (`belay-<application>`), created through the SDK as an operator would; `metadata` as given.
 */
export async function anchorIdentity(
  s: ApiStack,
  application: string,
  metadata: Record<string, string> = {},
): Promise<string> {
  const { default: Anchorbrowser } = await import('anchorbrowser');
  const sdk = new Anchorbrowser({
    apiKey: s.stack.anchor.apiKey,
    baseURL: s.stack.anchor.baseUrl,
    maxRetries: 0,
  });
  const baseUrl = s.stack.applications[application]?.baseUrl;
  if (!baseUrl) throw new Error(`the stack has no application ${application}`);
  await createAnchorIdentities({ client: async () => sdk }).applicationFor({ name: application, baseUrl });
  const created = await sdk.identities.create({
    source: baseUrl,
    metadata,
    credentials: [{ type: 'username_password', username: 'someone@example.com', password: 'unused' }],
  });
  if (!created.id) throw new Error('the local Anchor service created an identity without an id');
  return created.id;
}
