import { queryAll } from '../dynamo/query.ts';
import { canonicalJson, requestFields, requestHash } from './canonical.ts';
import { linkEntry, sealEntry } from './chain.ts';
import { withChainHead, writeChained } from './chain-write.ts';
import { type LedgerEntryInput, prepareEntry } from './entries.ts';
import { InvalidInputError, JobConflictError, JobNotFoundError } from './errors.ts';
import { UpdateBuilder } from './expression.ts';
import {
  fromEntryItem,
  fromJobItem,
  isEntryItem,
  isJobItem,
  plain,
  toEntryItem,
  toJobItem,
} from './items.ts';
import { assertId, epochSeconds, isExpired, jobKey, jobPk } from './keys.ts';
import { addEntryCost, getLiveJob, type LedgerContext, transact } from './store.ts';
import { translateError } from './translate.ts';
import { type Job, type JobOrigin, type JobRequest, type LedgerEntry, ZERO_COST } from './types.ts';

/** Creating a job, reading it with its ledger, and appending entries. */

/** Upper bound of a job's request; the job item stays far below DynamoDB's 400 KB. */
export const MAX_REQUEST_BYTES = 128 * 1024;

class AlreadyCreated extends Error {}

function assertRequest(request: JobRequest, stepCount: number): void {
  const fail = (field: string, why: string): never => {
    throw new InvalidInputError(field, why);
  };
  if (request === null || typeof request !== 'object') fail('request', 'must be an object');
  if (typeof request.playbook !== 'string' || request.playbook.length === 0)
    fail('playbook', 'must be a name@version');
  if (request.inputs === null || typeof request.inputs !== 'object') fail('inputs', 'must be an object');
  if (request.accounts === null || typeof request.accounts !== 'object')
    fail('accounts', 'must be an object');
  if (!Array.isArray(request.approvals)) fail('approvals', 'must be an array of step ids');
  if (!Number.isInteger(request.retryBudget) || request.retryBudget < 0)
    fail('retryBudget', 'must be an integer >= 0');
  if (request.deadline !== undefined && typeof request.deadline !== 'string')
    fail('deadline', 'must be an ISO time');
  if (request.model !== undefined && (typeof request.model !== 'string' || request.model.length > 200))
    fail('model', 'must be a model name');
  if (request.mode !== undefined && request.mode !== 'check') fail('mode', 'must be check');
  if (!Number.isInteger(stepCount) || stepCount < 0) fail('stepCount', 'must be an integer >= 0');
  const bytes = Buffer.byteLength(canonicalJson(requestFields(request)), 'utf8');
  if (bytes > MAX_REQUEST_BYTES)
    fail('request', `${bytes} bytes exceeds the limit of ${MAX_REQUEST_BYTES} bytes`);
}

/** Items the creating transaction writes: the job and its `job-created` entry. */
const CREATE_WRITES = 2;

/**
 * Creates the job (QUEUED, step 0, version 1) and its `job-created` entry in one
 * transaction. A repeat with the same id and request returns the existing job with
 * `created: false`; the same id with another request is `JobConflictError`. The id of a
 * terminal job past its TTL is free again, as it is in DynamoDB once the item is deleted.
 */
export async function createJob(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  request: JobRequest,
  stepCount: number,
  origin: JobOrigin = {},
): Promise<{ job: Job; created: boolean }> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  assertRequest(request, stepCount);
  if (origin.submittedBy !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(origin.submittedBy)) {
    throw new InvalidInputError('submittedBy', 'must be an API key id');
  }
  const now = ctx.now();
  const hash = requestHash(request);
  const job: Job = {
    ...plain(requestFields(request)),
    tenantId,
    jobId,
    requestHash: hash,
    status: 'QUEUED',
    nextStep: 0,
    stepCount,
    sessions: {},
    retriesUsed: 0,
    // The creating transaction's two writes (the job and its entry), on the entry and the job alike.
    cost: { ...ZERO_COST, dynamoWrites: CREATE_WRITES },
    version: 1,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    queuedSince: now.toISOString(),
    ...(origin.submittedBy === undefined ? {} : { submittedBy: origin.submittedBy }),
  };
  const prepared = await prepareEntry(ctx, tenantId, jobId, {
    type: 'job-created',
    ...(origin.submittedBy === undefined ? {} : { actor: origin.submittedBy }),
    detail: { playbook: request.playbook, stepCount, requestHash: hash },
    cost: { dynamoWrites: CREATE_WRITES },
  });
  // The first entry of the job's hash chain, at the job's own time; the job holds its hash as the head.
  const entry = linkEntry(sealEntry({ ...prepared, at: job.createdAt }, undefined), undefined);
  job.chainHead = entry.hash as string;
  try {
    await transact(
      ctx,
      {
        operation: 'createJob',
        onConditionFailed: (s) =>
          s?.requestHash === hash ? new AlreadyCreated() : new JobConflictError(jobId),
      },
      [
        {
          Put: {
            TableName: ctx.tableName,
            Item: toJobItem(job),
            ConditionExpression: 'attribute_not_exists(#pk) OR #expiresAt <= :now',
            ExpressionAttributeNames: { '#pk': 'pk', '#expiresAt': 'expiresAt' },
            ExpressionAttributeValues: { ':now': epochSeconds(now) },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { Put: { TableName: ctx.tableName, Item: toEntryItem(entry) } },
      ],
    );
  } catch (err) {
    if (err instanceof AlreadyCreated)
      return { job: await getLiveJob(ctx, tenantId, jobId, 'createJob'), created: false };
    throw err;
  }
  ctx.chainHeads.set(tenantId, jobId, job.chainHead);
  return { job, created: true };
}

/**
 * The job and its ledger entries in append order, from ONE strongly consistent Query on
 * the job's partition (following `LastEvaluatedKey` past 1 MB pages). Entries older than
 * the job (left by an expired job that had the same id) are not part of it.
 */
export async function readJob(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
): Promise<{ job: Job; entries: LedgerEntry[] }> {
  const { job, entries } = await readPartition(ctx, tenantId, jobId, 'readJob');
  const createdAt = job.createdAt;
  return { job, entries: entries.filter((e) => e.at >= createdAt) };
}

/**
 * The job and every entry of its partition, in key order, those left by an earlier job with
 * the same id included: what a receipt checks the job's hash chain against (an entry whose
 * time was changed is still found by its link).
 */
export async function readPartition(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  operation = 'readPartition',
): Promise<{ job: Job; entries: LedgerEntry[] }> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  let job: Job | undefined;
  const entries: LedgerEntry[] = [];
  let items: Record<string, unknown>[];
  try {
    items = await queryAll(ctx.doc, {
      TableName: ctx.tableName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': 'pk' },
      ExpressionAttributeValues: { ':pk': jobPk(tenantId, jobId) },
      ConsistentRead: true,
    });
  } catch (err) {
    throw translateError(err, { operation });
  }
  for (const item of items) {
    if (isJobItem(item)) job = fromJobItem(item);
    else if (isEntryItem(item)) entries.push(fromEntryItem(item));
  }
  if (job === undefined || isExpired(job.expiresAt, ctx.now())) throw new JobNotFoundError(tenantId, jobId);
  ctx.chainHeads.set(tenantId, jobId, job.chainHead);
  return { job, entries };
}

/**
 * Appends an entry to the job's ledger. The job must exist for this tenant (a condition
 * check in the same transaction), so an entry never lands beside a missing or foreign job.
 */
export async function append(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  input: LedgerEntryInput,
): Promise<LedgerEntry> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  const entry = await prepareEntry(ctx, tenantId, jobId, input);
  // The entry's cost goes onto the job's totals in the same transaction (no version bump: an
  // append fences nothing), and the entry into the job's hash chain (the head moves).
  const update = new UpdateBuilder();
  addEntryCost(update, entry);
  update
    .when(`attribute_exists(${update.path('pk')})`)
    .when(
      `attribute_not_exists(${update.path('expiresAt')}) OR ${update.path('expiresAt')} > ${update.value(epochSeconds(ctx.now()))}`,
    );
  const jobUpdate = { TableName: ctx.tableName, Key: jobKey(tenantId, jobId), ...update.build() };
  return writeChained(ctx, {
    operation: 'append',
    tenantId,
    jobId,
    entry,
    items: (linked, head) => [
      {
        Update: {
          ...withChainHead(jobUpdate, head, linked.hash as string),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      { Put: { TableName: ctx.tableName, Item: toEntryItem(linked) } },
    ],
    onConditionFailed: () => new JobNotFoundError(tenantId, jobId),
    transact: (context, items) => transact(ctx, context, items),
  });
}
