import { redact } from '../redact.ts';
import { type LedgerEntryInput, normalizeCost, prepareEntry } from './entries.ts';
import { InvalidInputError, LedgerError, StaleCheckpointError } from './errors.ts';
import { UpdateBuilder } from './expression.ts';
import { type JobSnapshot, plain } from './items.ts';
import { assertId } from './keys.ts';
import { bumpVersion } from './status.ts';
import { commitJobWrite, type LedgerContext, writeJob } from './store.ts';
import type { Cost, Evidence, Job, ScreenshotRef } from './types.ts';

/** A job's failure as stored: reason and message only, the message redacted for its tenant. */
export function storedFailure(
  tenantId: string,
  failure: { reason: string; message: string },
): { reason: string; message: string } {
  return redact({ reason: failure.reason, message: failure.message }, { tenantId });
}

/** Completing a step and the engine's other bookkeeping on the job item. */

export interface CompleteStepInput {
  tenantId: string;
  jobId: string;
  /** The job version the worker read before running the step. */
  expectedVersion: number;
  stepIndex: number;
  /** Step id. */
  step: string;
  attempt: number;
  sessionId?: string;
  identityId?: string;
  idempotencyKey?: string;
  evidence: Evidence;
  cost: Partial<Cost>;
  actor?: string;
  detail?: Record<string, unknown>;
  /** The page when the step was verified, when the playbook's screenshot policy took one. */
  screenshot?: ScreenshotRef;
  /**
   * The job as the worker read it, at `expectedVersion`: the job the completion leaves is then
   * worked out from it (pointer, version, time, cost) instead of read back, so a checkpoint is
   * one call. Fields that other writes change without moving the version (the cost of entries
   * appended meanwhile, a write owner's heartbeat, a cancel request) are as read.
   */
  job?: Job;
}

export interface JobUpdate {
  /** Refuse the write (`StaleCheckpointError`) unless the job is at this version. */
  expectedVersion?: number;
  /** Fields to replace; `executionName: undefined` or `failure: undefined` removes them. */
  set?: Partial<
    Pick<Job, 'sessions' | 'retriesUsed' | 'executionName' | 'failure' | 'capacityAskedAt' | 'writeOwner'>
  >;
  /** Cost components to add to the job's totals. */
  addCost?: Partial<Cost>;
  /** A ledger entry to write in the same transaction. */
  entry?: LedgerEntryInput;
}

export function assertCount(field: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidInputError(field, 'must be a non-negative integer');
  }
}

/** The part of a snapshot a `StaleCheckpointError` reports. */
export function observedState(s: JobSnapshot): {
  status?: Job['status'];
  version?: number;
  nextStep?: number;
} {
  return { status: s.status, version: s.version, nextStep: s.nextStep };
}

function addCost(u: UpdateBuilder, cost: Cost): void {
  for (const [key, value] of Object.entries(cost)) {
    if (value !== 0) u.increment(['cost', key], value);
  }
}

/**
 * Records a verified step: ONE transaction puts the `step-completed` entry and advances the
 * job (nextStep, version, cost) on condition that the job is RUNNING, at `expectedVersion`
 * and at this step. Of two workers racing on a step exactly one wins; the other gets
 * `StaleCheckpointError` and nothing of its attempt is written.
 */
export async function completeStep(ctx: LedgerContext, input: CompleteStepInput): Promise<Job> {
  const { tenantId, jobId, expectedVersion, stepIndex } = input;
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  assertCount('expectedVersion', expectedVersion);
  assertCount('stepIndex', stepIndex);
  assertCount('attempt', input.attempt);
  const entry = await prepareEntry(ctx, tenantId, jobId, {
    type: 'step-completed',
    step: input.step,
    stepIndex,
    attempt: input.attempt,
    sessionId: input.sessionId,
    identityId: input.identityId,
    idempotencyKey: input.idempotencyKey,
    actor: input.actor,
    detail: input.detail,
    evidence: input.evidence,
    cost: input.cost,
    ...(input.screenshot ? { screenshot: input.screenshot } : {}),
  });
  const known = input.job;
  if (known && (known.tenantId !== tenantId || known.jobId !== jobId || known.version !== expectedVersion))
    throw new InvalidInputError('job', 'must be the job read at expectedVersion');
  const now = ctx.now();
  const u = new UpdateBuilder();
  u.set('nextStep', stepIndex + 1);
  bumpVersion(u, now);
  u.when(`${u.path('version')} = ${u.value(expectedVersion)}`)
    .when(`${u.path('nextStep')} = ${u.value(stepIndex)}`)
    .when(`${u.path('stepCount')} > ${u.value(stepIndex)}`)
    .when(`${u.path('status')} = ${u.value('RUNNING')}`);
  const write = {
    operation: 'completeStep',
    tenantId,
    jobId,
    update: u,
    entry,
    onConditionFailed: (s: JobSnapshot) =>
      new StaleCheckpointError(jobId, stepIndex, expectedVersion, observedState(s)),
  };
  if (!known) return (await writeJob(ctx, write)).job;
  await commitJobWrite(ctx, write);
  const head = ctx.chainHeads.get(tenantId, jobId);
  // The condition held: the job was `known` (its version moves with every change but those
  // named on `input.job`), now with this completion applied.
  return {
    ...known,
    nextStep: stepIndex + 1,
    version: expectedVersion + 1,
    updatedAt: now.toISOString(),
    cost: plusCost(known.cost, entry.cost),
    // The chain's head is this completion's entry (the chain write remembers it).
    ...(typeof head === 'string' ? { chainHead: head } : {}),
  };
}

/** `a + b`, component by component. */
function plusCost(a: Cost, b: Cost): Cost {
  const out = { ...a };
  for (const key of Object.keys(b) as (keyof Cost)[]) out[key] = (a[key] ?? 0) + b[key];
  return out;
}

/**
 * Conditional update of the job's bookkeeping (sessions per application, retries, execution
 * name, failure, cost), with an optional entry in the same transaction. Increments the version.
 */
export async function updateJob(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  update: JobUpdate,
): Promise<Job> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  const { expectedVersion, set = {}, entry } = update;
  if (expectedVersion !== undefined) assertCount('expectedVersion', expectedVersion);
  const now = ctx.now();
  const u = new UpdateBuilder();
  if ('sessions' in set) {
    if (set.sessions === null || typeof set.sessions !== 'object') {
      throw new InvalidInputError('set.sessions', 'must be an object of application -> session');
    }
    u.set('sessions', plain(set.sessions));
  }
  if ('retriesUsed' in set) {
    assertCount('set.retriesUsed', set.retriesUsed);
    u.set('retriesUsed', set.retriesUsed);
  }
  if ('executionName' in set) {
    if (set.executionName === undefined) u.remove('executionName');
    else u.set('executionName', String(set.executionName));
  }
  if ('capacityAskedAt' in set) {
    if (typeof set.capacityAskedAt !== 'string' || Number.isNaN(Date.parse(set.capacityAskedAt))) {
      throw new InvalidInputError('set.capacityAskedAt', 'must be an ISO 8601 time');
    }
    u.set('capacityAskedAt', set.capacityAskedAt);
  }
  if ('writeOwner' in set) {
    const owner = set.writeOwner;
    if (!owner || typeof owner.step !== 'string' || typeof owner.attemptId !== 'string') {
      throw new InvalidInputError('set.writeOwner', 'must name the step and the attempt');
    }
    u.set('writeOwner', plain(owner));
  }
  if ('failure' in set) {
    if (set.failure === undefined) u.remove('failure');
    else u.set('failure', storedFailure(tenantId, set.failure));
  }
  addCost(u, normalizeCost(update.addCost));
  bumpVersion(u, now);
  if (expectedVersion !== undefined) u.when(`${u.path('version')} = ${u.value(expectedVersion)}`);
  const prepared = entry === undefined ? undefined : await prepareEntry(ctx, tenantId, jobId, entry);
  const { job } = await writeJob(ctx, {
    operation: 'updateJob',
    tenantId,
    jobId,
    update: u,
    ...(prepared === undefined ? {} : { entry: prepared }),
    onConditionFailed: (s) =>
      expectedVersion !== undefined && s.version !== expectedVersion
        ? new StaleCheckpointError(jobId, undefined, expectedVersion, observedState(s))
        : new LedgerError(`updateJob: write to job ${jobId} refused for an unknown reason`),
  });
  return job;
}
