/** What the local stack keeps under its data directory besides the services' own data. */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createApiKeyStore } from '../lambdas/lib/auth/api-keys.ts';
import {
  type Job,
  JobNotFoundError,
  type Ledger,
  type OpenJobRef,
  TABLE_KEYS,
  TERMINAL_STATUSES,
} from '../lambdas/lib/ledger/index.ts';
import { DEMO_TENANT } from './seed.ts';

/**
 * Every unfinished job, found as the recovery sweep finds them: from the ledger's index of
 * unfinished jobs (gsi3, every shard), each then read itself (the index is eventually
 * consistent). The local stack resumes them all on start, without reading the whole table.
 */
export async function unfinishedJobs(ledger: Pick<Ledger, 'listOpenJobs' | 'getJob'>): Promise<Job[]> {
  const refs: OpenJobRef[] = [];
  for (let shard = 0; shard < TABLE_KEYS.gsi3.shards; shard++) {
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await ledger.listOpenJobs(shard, cursor ? { cursor } : {});
      refs.push(...page.jobs);
      cursor = page.next;
    } while (cursor);
  }
  const jobs: Job[] = [];
  for (const ref of refs) {
    const job = await ledger.getJob(ref.tenantId, ref.jobId).catch((err: unknown) => {
      if (err instanceof JobNotFoundError) return undefined;
      throw err;
    });
    if (job && !TERMINAL_STATUSES.includes(job.status)) jobs.push(job);
  }
  return jobs;
}

/** The job an execution's input names, or undefined when it names none or the job is gone. */
export async function jobOfExecution(ledger: Ledger, input: string): Promise<Job | undefined> {
  let ids: { tenantId?: unknown; jobId?: unknown };
  try {
    ids = JSON.parse(input) as typeof ids;
  } catch {
    return undefined;
  }
  if (typeof ids.tenantId !== 'string' || typeof ids.jobId !== 'string') return undefined;
  return ledger.getJob(ids.tenantId, ids.jobId).catch((err: unknown) => {
    if (err instanceof JobNotFoundError) return undefined;
    throw err;
  });
}

/** The demo tenant's key: reused from the data directory while it is valid, else created (and kept there). */
export async function demoKey(doc: DynamoDBDocumentClient, tableName: string, file: string): Promise<string> {
  const keys = createApiKeyStore({ doc, tableName });
  const existing = await readFile(file, 'utf8').then(
    (k) => k.trim(),
    () => undefined,
  );
  if (existing && (await keys.verify(existing))) return existing;
  const created = await keys.create(DEMO_TENANT, ['submitter', 'approver', 'admin'], {
    label: 'demo',
    plan: 'free',
  });
  await writeFile(file, created.apiKey, { mode: 0o600 });
  return created.apiKey;
}

export async function persistentToken(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const token = randomBytes(18).toString('base64url');
    await writeFile(file, token, { mode: 0o600 });
    return token;
  }
}
