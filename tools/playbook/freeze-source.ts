/**
 * Where `npm run playbook -- freeze` reads an agent step's recorded path: a verified job's
 * ledger (`--job`), or the action cache (the newest verified entry per agent step of the
 * playbook's version, for the tenant). Both read the ledger table directly, as `npm run keys`
 * does: the API serves neither the cache nor the job's values unredacted.
 */
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { valuesOf } from '../../lambdas/lib/agent/cache/placeholders.ts';
import { cachePk } from '../../lambdas/lib/agent/cache/store.ts';
import { planReplay } from '../../lambdas/lib/agent/replay.ts';
import { verifiedEvidence } from '../../lambdas/lib/engine/history.ts';
import { actionRecord } from '../../lambdas/lib/engine/step-actions.ts';
import { JobNotFoundError, type Ledger } from '../../lambdas/lib/ledger/index.ts';
import type { Evidence, LedgerEntry } from '../../lambdas/lib/ledger/types.ts';
import { FreezeError, type RecordedPath } from './freeze.ts';

/**
 * The recorded path of each of `steps` (agent step ids) in one verified job of `playbookId`.
 * @param order every step id of the playbook, in order (a step's values are the inputs and the evidence of the steps before it)
 */
export async function pathsFromJob(
  ledger: Pick<Ledger, 'readJob'>,
  tenantId: string,
  jobId: string,
  playbookId: string,
  steps: readonly string[],
  order: readonly string[] = steps,
): Promise<Map<string, RecordedPath>> {
  let read: Awaited<ReturnType<Ledger['readJob']>>;
  try {
    read = await ledger.readJob(tenantId, jobId);
  } catch (err) {
    if (err instanceof JobNotFoundError)
      throw new FreezeError(`job ${jobId} is not found for tenant ${tenantId} (--tenant names another)`, {
        cause: err,
      });
    throw err;
  }
  const { job, entries } = read;
  if (job.playbook !== playbookId)
    throw new FreezeError(`job ${jobId} is a job of ${job.playbook}, not of ${playbookId}`);
  return pathsFromEntries(entries, job.inputs, jobId, steps, order);
}

/** The paths in a job's entries (pure; `pathsFromJob` reads them). */
export function pathsFromEntries(
  entries: readonly LedgerEntry[],
  inputs: unknown,
  jobId: string,
  steps: readonly string[],
  order: readonly string[] = steps,
): Map<string, RecordedPath> {
  const verified = verifiedEvidence(entries);
  const paths = new Map<string, RecordedPath>();
  for (const step of steps) {
    // The values the step had when it ran, as the cache's placeholders name them: the inputs and
    // the evidence of the steps before it (a later step's, or its own, is no reference it may hold).
    const before = order.slice(0, Math.max(0, order.indexOf(step)));
    const evidence: Record<string, Evidence> = Object.fromEntries(
      [...verified].filter(([id]) => before.includes(id)),
    );
    const values = valuesOf(inputs, evidence);
    if (!verified.has(step))
      throw new FreezeError(`step ${step} of job ${jobId} never verified: freeze from a job that succeeded`);
    const record = actionRecord(entries, step);
    const { planned, answers } = planReplay(record);
    if (planned.at(-1)?.action.name !== 'done')
      throw new FreezeError(
        `step ${step} of job ${jobId} verified without its recorded actions reaching done (its probe found the write, or the record is cut short): freeze from another job`,
      );
    if (planned.some((p) => p.type === 'action-refused'))
      throw new FreezeError(
        `step ${step} of job ${jobId} had an action refused (a goto off the job's domains): its path is not one to script`,
      );
    paths.set(step, {
      step,
      from: `job ${jobId}`,
      actions: planned.map((p) => p.action),
      values,
      askedPerson: answers.length > 0 || planned.some((p) => p.action.name === 'ask_person'),
      healed: record.some((r) => r.type === 'action-healed'),
    });
  }
  return paths;
}

/** A cache entry as the table holds it (the fields freeze reads). */
interface CacheItem {
  status?: string;
  entryId?: string;
  jobId?: string;
  createdAt?: string;
  healedFrom?: string;
  key?: { step?: string };
  actions?: Record<string, unknown>[];
}

/** The newest verified cache entry's path for each of `steps`, for the tenant and the playbook's version. */
export async function pathsFromCache(
  doc: DynamoDBDocumentClient,
  tableName: string,
  tenantId: string,
  playbookId: string,
  steps: readonly string[],
): Promise<Map<string, RecordedPath>> {
  const items: CacheItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': cachePk({ tenantId, playbookId }) },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...((out.Items ?? []) as CacheItem[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return pathsFromCacheItems(items, tenantId, playbookId, steps);
}

/** The paths in the cache's items (pure; `pathsFromCache` reads them). */
export function pathsFromCacheItems(
  items: readonly CacheItem[],
  tenantId: string,
  playbookId: string,
  steps: readonly string[],
): Map<string, RecordedPath> {
  const paths = new Map<string, RecordedPath>();
  for (const step of steps) {
    const newest = items
      .filter((i) => i.status === 'verified' && i.key?.step === step && Array.isArray(i.actions))
      .sort((a, b) => String(b.createdAt ?? '').localeCompare(String(a.createdAt ?? '')))[0];
    if (!newest)
      throw new FreezeError(
        `step ${step} of ${playbookId} has no verified action-cache entry for tenant ${tenantId}: run a job of it first, or give --job <jobId>`,
      );
    // The list as it was verified, placeholders in place of the job's values, its done included.
    const actions = newest.actions ?? [];
    paths.set(step, {
      step,
      from: `cache entry ${newest.entryId ?? '?'} (from job ${newest.jobId ?? '?'})`,
      actions,
      values: [],
      askedPerson: false,
      healed: newest.healedFrom !== undefined,
    });
  }
  return paths;
}
