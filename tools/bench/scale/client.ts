/**
 * The load simulation's clients of the HTTP API: a tenant with a key and a connected account, a
 * submitter that keeps SUBMITTERS requests in flight, and the retries a well-behaved client makes.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { executionName } from '../../../lambdas/lib/engine/executions.ts';
import type { ScaleStack } from './stack.ts';

/** Submissions in flight at once. */
export const SUBMITTERS = 100;

const INPUTS = JSON.parse(
  readFileSync(new URL('../../../demo/jobs/checkout.json', import.meta.url), 'utf8'),
).inputs;

export interface Tenant {
  tenantId: string;
  apiKey: string;
  accountId: string;
}

async function call(
  stack: ScaleStack,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.api.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

export async function setUpTenants(stack: ScaleStack, count: number, runId: string): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (let i = 0; i < count; i++) {
    const tenantId = `scale-${runId}-t${i}`;
    const created = await stack.deps.keys.create(tenantId, ['submitter', 'approver'], {
      label: 'scale',
      plan: 'enterprise',
    });
    const accountId = `acct_scale_${i}`;
    await stack.deps.accounts.create({ tenantId, application: 'shop', label: 'Shop', accountId });
    tenants.push({ tenantId, apiKey: created.apiKey, accountId });
  }
  return tenants;
}

/** What the API answered the driver, besides success: refusals it retried, as a client does. */
export interface ApiRefusals {
  rateLimited: number;
  unavailable: number;
  /** Requests that got no answer (the connection refused or timed out). */
  unanswered: number;
}

/**
 * A request as a well-behaved client makes it: a 429 or 503 is retried after its `Retry-After`,
 * a request that got no answer after a second or two (every request here is idempotent: a job
 * id, a decision on a wait), at most 20 times; anything else is the answer.
 */
export async function politely(
  stack: ScaleStack,
  refusals: ApiRefusals,
  ...args: Parameters<typeof call> extends [ScaleStack, ...infer R] ? R : never
): Promise<{ status: number; body: Record<string, unknown> }> {
  for (let attempt = 0; ; attempt++) {
    let res: { status: number; body: Record<string, unknown> };
    try {
      res = await call(stack, ...args);
    } catch (err) {
      if (attempt >= 20) throw err;
      refusals.unanswered += 1;
      await sleep(1000 + 1000 * Math.random());
      continue;
    }
    if ((res.status !== 429 && res.status !== 503) || attempt >= 20) return res;
    if (res.status === 429) refusals.rateLimited += 1;
    else refusals.unavailable += 1;
    const details = (res.body.error as { details?: { retryAfterSeconds?: number } } | undefined)?.details;
    await sleep(1000 * (details?.retryAfterSeconds ?? 1) * (0.5 + Math.random()));
  }
}

/** Submits one job; its execution's name, for waiting on it. */
export async function submit(
  stack: ScaleStack,
  refusals: ApiRefusals,
  tenant: Tenant,
  jobId: string,
): Promise<string> {
  const res = await politely(stack, refusals, tenant.apiKey, 'POST', '/jobs', {
    jobId,
    playbook: 'checkout@1',
    inputs: INPUTS,
    accounts: { shop: tenant.accountId },
  });
  if (res.status !== 202 && res.status !== 200) {
    throw new Error(`submitting ${jobId} answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  // The name carries the job's incarnation (its createdAt), which the ledger holds.
  const job = await stack.engine.ledger.getJob(tenant.tenantId, jobId);
  return job.executionName ?? executionName(job, 0);
}

/** Waits until every named execution is closed (or the deadline passes); the names still running. */
export async function closed(stack: ScaleStack, names: Set<string>, deadline: number): Promise<string[]> {
  for (;;) {
    const running = stack.sfn
      .listExecutions({ statusFilter: 'RUNNING' })
      .map((e) => e.name)
      .filter((n) => names.has(n));
    if (running.length === 0 || Date.now() > deadline) return running;
    await sleep(500);
  }
}

/**
 * Submits `count` jobs, spread over `tenants`, SUBMITTERS at a time: a thousand connections at
 * once overflow the local API server's accept backlog (and are no client's way to submit).
 */
export async function submitAll(
  stack: ScaleStack,
  refusals: ApiRefusals,
  tenants: readonly Tenant[],
  count: number,
  jobIdOf: (i: number) => string,
  onJob: (jobId: string, tenant: Tenant) => void,
): Promise<{ names: Set<string>; jobIds: string[]; refused: unknown[] }> {
  const names = new Set<string>();
  const jobIds: string[] = [];
  const refused: unknown[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(SUBMITTERS, count) }, async () => {
      for (let i = next++; i < count; i = next++) {
        const tenant = tenants[i % tenants.length] as Tenant;
        const jobId = jobIdOf(i);
        onJob(jobId, tenant);
        jobIds.push(jobId);
        try {
          names.add(await submit(stack, refusals, tenant, jobId));
        } catch (err) {
          refused.push(err);
        }
      }
    }),
  );
  return { names, jobIds, refused };
}
