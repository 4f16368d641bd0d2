import type { Job, JobStatus, Ledger } from '../../../../lambdas/lib/ledger/index.ts';

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field in the tests
  json: any;
}

/** One HTTP call to the local API: JSON in and out, with a bearer key when given. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Polls the ledger until the job satisfies `done` (default: has `status`). */
export async function waitForJob(
  ledger: Ledger,
  tenantId: string,
  jobId: string,
  status: JobStatus | ((job: Job) => boolean),
  timeoutMs = 15_000,
): Promise<Job> {
  const done = typeof status === 'function' ? status : (job: Job) => job.status === status;
  const end = Date.now() + timeoutMs;
  let last: Job | undefined;
  while (Date.now() < end) {
    try {
      last = await ledger.getJob(tenantId, jobId);
      if (done(last)) return last;
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${jobId} did not get there in ${timeoutMs} ms; last status ${last?.status ?? 'none'}`);
}

/** A valid `test-order@1` submission. */
export function order(jobId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    jobId,
    playbook: 'test-order@1',
    inputs: { sku: 'MUG-001', quantity: 2 },
    accounts: { shop: 'acct_acme_shop' },
    ...extra,
  };
}
