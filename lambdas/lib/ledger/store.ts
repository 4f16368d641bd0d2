import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, TransactWriteCommand } from '../aws/sdk/lib-dynamodb.ts';
import { type ChainHeads, withChainHead, writeChained } from './chain-write.ts';
import { JobNotFoundError } from './errors.ts';
import type { EvidenceStore } from './evidence-store.ts';
import type { UpdateBuilder } from './expression.ts';
import { fromJobItem, type JobSnapshot, toEntryItem } from './items.ts';
import { epochSeconds, isExpired, jobKey } from './keys.ts';
import { isTransactionConflict, type TranslateContext, translateError } from './translate.ts';
import type { Job, LedgerEntry } from './types.ts';

/** What every ledger operation needs: the client, the table and the injected clock. */
export interface LedgerContext {
  doc: DynamoDBDocumentClient;
  tableName: string;
  now(): Date;
  terminalTtlDays: number;
  maxInlineEvidenceBytes: number;
  evidenceStore: EvidenceStore | undefined;
  nextEntryId(): string;
  /** The chain heads this process last saw (`chain-write.ts`). */
  chainHeads: ChainHeads;
}

/** Returned by an operation's condition handler when the refused write was already in effect. */
export const NOOP = Symbol('noop');

/**
 * Explains a refused conditional write on a job that exists and has not expired (a missing
 * or expired job is `JobNotFoundError` before the handler is asked).
 */
export type ConditionHandler = (snapshot: JobSnapshot) => Error | typeof NOOP;

export interface JobWrite {
  operation: string;
  tenantId: string;
  jobId: string;
  /** The update of the job item, with the operation's own conditions. */
  update: UpdateBuilder;
  /** A ledger entry to put in the same transaction. */
  entry?: LedgerEntry;
  onConditionFailed: ConditionHandler;
}

const CONFLICT_ATTEMPTS = 5;

class Noop extends Error {}

/**
 * Applies a conditional update to a job item that must exist and not have expired, with
 * an optional ledger entry in the same transaction, and returns the job as written.
 *
 * Always a TransactWriteItems, even for the job item alone: its `ClientRequestToken` makes
 * an SDK retry of a write whose response was lost a no-op instead of a second increment
 * or a spurious `StaleCheckpointError`. Transactions return no values, so the job is read
 * back with a consistent GetItem (it reflects this write, and any that landed since).
 * When the handler says `NOOP` (the job is already where the caller wants it), nothing is
 * written and the current job is returned. A caller that knows what its write leaves (the
 * checkpoint, `completeStep`) uses {@link commitJobWrite} and reads nothing back.
 */
export async function writeJob(ctx: LedgerContext, write: JobWrite): Promise<{ job: Job; written: boolean }> {
  const written = await commitJobWrite(ctx, write);
  return { job: await getLiveJob(ctx, write.tenantId, write.jobId, write.operation), written };
}

/** The transaction of {@link writeJob}, without the read back: whether it wrote (false: `NOOP`). */
export async function commitJobWrite(ctx: LedgerContext, write: JobWrite): Promise<boolean> {
  const { tenantId, jobId, update, entry, operation } = write;
  const now = ctx.now();
  // The job's cost is the sum of its entries' costs: every entry written with the job adds its own.
  if (entry !== undefined) addEntryCost(update, entry);
  update
    .when(`attribute_exists(${update.path('pk')})`)
    .when(
      `attribute_not_exists(${update.path('expiresAt')}) OR ${update.path('expiresAt')} > ${update.value(epochSeconds(now))}`,
    );
  const onConditionFailed = (snapshot: JobSnapshot | undefined): Error => {
    if (snapshot === undefined || isExpired(snapshot.expiresAt, now))
      return new JobNotFoundError(tenantId, jobId);
    const result = write.onConditionFailed(snapshot);
    return result === NOOP ? new Noop() : result;
  };
  const jobUpdate = {
    TableName: ctx.tableName,
    Key: jobKey(tenantId, jobId),
    ...update.build(),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  try {
    if (entry === undefined) await transact(ctx, { operation, onConditionFailed }, [{ Update: jobUpdate }]);
    else {
      // The entry goes into the job's hash chain: linked after the head, which the write moves.
      await writeChained(ctx, {
        operation,
        tenantId,
        jobId,
        entry,
        items: (linked, head) => [
          { Update: withChainHead(jobUpdate, head, linked.hash as string) },
          { Put: { TableName: ctx.tableName, Item: toEntryItem(linked) } },
        ],
        onConditionFailed,
        transact: (context, items) => transact(ctx, context, items),
      });
    }
    return true;
  } catch (err) {
    if (!(err instanceof Noop)) throw err;
    return false;
  }
}

/** Adds an entry's (non-zero) cost counters to the job item's totals. */
export function addEntryCost(update: UpdateBuilder, entry: Pick<LedgerEntry, 'cost'>): void {
  for (const [key, value] of Object.entries(entry.cost)) {
    if (value !== 0) update.increment(['cost', key], value);
  }
}

type TransactItems = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>;

/**
 * TransactWriteItems, retried a few times (with jitter) when cancelled only by a conflicting
 * transaction; other failures are translated with `context`.
 */
export async function transact(
  ctx: LedgerContext,
  context: TranslateContext,
  items: TransactItems,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.doc.send(
        new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }),
      );
      return;
    } catch (err) {
      if (!isTransactionConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw translateError(err, context);
      await sleep(10 + Math.random() * 40 * attempt);
    }
  }
}

/** The job (consistent read), or `JobNotFoundError` when it is missing, another tenant's or expired. */
export async function getLiveJob(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  operation: string,
): Promise<Job> {
  let item: Record<string, unknown> | undefined;
  try {
    const out = await ctx.doc.send(
      new GetCommand({ TableName: ctx.tableName, Key: jobKey(tenantId, jobId), ConsistentRead: true }),
    );
    item = out.Item;
  } catch (err) {
    throw translateError(err, { operation });
  }
  const job = item === undefined ? undefined : fromJobItem(item);
  if (job === undefined || isExpired(job.expiresAt, ctx.now())) throw new JobNotFoundError(tenantId, jobId);
  ctx.chainHeads.set(tenantId, jobId, job.chainHead);
  return job;
}
