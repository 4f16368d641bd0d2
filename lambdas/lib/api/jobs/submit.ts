import { randomBytes } from 'node:crypto';
import type { Account } from '../../accounts/types.ts';
import type { Principal } from '../../auth/api-keys.ts';
import { JobConflictError } from '../../ledger/errors.ts';
import type { Job, JobRequest } from '../../ledger/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import { tenantMayRun } from '../../playbooks/registry.ts';
import { type ApiDeps, findPlaybook } from '../deps.ts';
import { BadRequestError, ConflictError, type FieldIssue, UnprocessableError } from '../errors.ts';
import { fieldIssues, ID_PATTERN } from '../schemas.ts';
import { startJobExecution } from '../step-functions.ts';
import { type SubmitJobBody, SubmitJobBodySchema } from './schemas.ts';

/** Retry budget of a job that does not name one. */
export const DEFAULT_RETRY_BUDGET = 3;

export interface SubmitResult {
  job: Job;
  playbook: Playbook;
  /** False for a repeat of an earlier submission (same job id, same request). */
  created: boolean;
}

/**
 * Submits a job for the caller's tenant: validates the request (its shape, the playbook,
 * the inputs against the playbook's schema, approvals against its steps, and every account
 * against the tenant's connected accounts), then creates the job and starts its execution.
 * Nothing is written and nothing started unless all of that holds.
 *
 * The job id (body `jobId` or the `Idempotency-Key` header) makes submission idempotent:
 * the same id with the same request returns the existing job (`created: false`) and starts
 * no second execution; with another request it is a 409. The execution name is derived
 * from the job's tenant, id and incarnation, so even a lost response retried cannot start two
 * executions, and a job submitted again under an id whose job expired gets a name of its own.
 */
export async function submitJob(
  deps: ApiDeps,
  principal: Principal,
  body: unknown,
  idempotencyKey: string | undefined,
): Promise<SubmitResult> {
  const parsed = SubmitJobBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new BadRequestError('invalid_request', 'the job is not valid: see details for the fields to fix', {
      details: fieldIssues(parsed.error),
    });
  }
  const request = parsed.data;
  const jobId = resolveJobId(request.jobId, idempotencyKey);
  const found = findPlaybook(deps, request.playbook);
  // A playbook reserved to other tenants is as unknown to this one as one that does not exist.
  const playbook = found && tenantMayRun(found, principal.tenantId) ? found : undefined;
  if (!playbook) {
    throw new UnprocessableError('unknown_playbook', `there is no playbook ${request.playbook}`, {
      details: [
        { field: 'playbook', message: `no playbook ${request.playbook}; check the name and version` },
      ],
    });
  }
  const issues: FieldIssue[] = [];
  const inputs = playbook.inputSchema.safeParse(request.inputs);
  if (!inputs.success) issues.push(...fieldIssues(inputs.error, 'inputs'));
  const stepIds = new Set(playbook.steps.map((s) => s.id));
  (request.approvals ?? []).forEach((id, i) => {
    if (!stepIds.has(id)) {
      issues.push({
        field: `approvals.${i}`,
        message: `${playbook.id} has no step ${id}; use one of ${[...stepIds].join(', ')}`,
      });
    }
  });
  if (request.deadline !== undefined && Date.parse(request.deadline) <= deps.engine.clock().getTime()) {
    issues.push({ field: 'deadline', message: 'is in the past' });
  }
  const accounts = await resolveAccounts(deps, principal.tenantId, playbook, request, issues);
  if (issues.length > 0) {
    throw new UnprocessableError(
      'invalid_job',
      `the job does not fit ${playbook.id}: see details for the fields to fix`,
      {
        details: issues,
      },
    );
  }

  const jobRequest: JobRequest = {
    playbook: playbook.id,
    inputs: request.inputs,
    accounts,
    approvals: request.approvals ?? [],
    retryBudget: request.retryBudget ?? DEFAULT_RETRY_BUDGET,
    ...(request.deadline === undefined ? {} : { deadline: request.deadline }),
    ...(request.model === undefined ? {} : { model: request.model }),
    ...(request.mode === undefined ? {} : { mode: request.mode }),
  };
  let result: { job: Job; created: boolean };
  try {
    result = await deps.engine.ledger.createJob(
      principal.tenantId,
      jobId,
      jobRequest,
      playbook.steps.length,
      {
        submittedBy: principal.keyId,
      },
    );
  } catch (err) {
    if (err instanceof JobConflictError) {
      throw new ConflictError(
        'job_conflict',
        `job ${jobId} was already submitted with a different request; resubmit the same request or use another job id`,
        {
          details: [
            {
              field: request.jobId === undefined ? 'header:Idempotency-Key' : 'jobId',
              message: 'already used',
            },
          ],
        },
      );
    }
    throw err;
  }
  // A repeat starts the execution only if the first attempt created the job but could not
  // start it (no execution has claimed the job yet); the name makes a double start impossible.
  if (result.created || (result.job.status === 'QUEUED' && result.job.executionName === undefined)) {
    await startJobExecution(deps.sfn, deps.stateMachineArn, result.job);
  }
  return { ...result, playbook };
}

function resolveJobId(bodyJobId: string | undefined, idempotencyKey: string | undefined): string {
  if (idempotencyKey !== undefined && !ID_PATTERN.test(idempotencyKey)) {
    throw new BadRequestError('invalid_request', 'the Idempotency-Key header is not a valid job id', {
      details: [
        { field: 'header:Idempotency-Key', message: 'use 1-64 characters of A-Z, a-z, 0-9, _ and -' },
      ],
    });
  }
  if (bodyJobId !== undefined && idempotencyKey !== undefined && bodyJobId !== idempotencyKey) {
    throw new BadRequestError(
      'invalid_request',
      'jobId and the Idempotency-Key header differ; send one, or the same in both',
      {
        details: [{ field: 'jobId', message: 'differs from the Idempotency-Key header' }],
      },
    );
  }
  return bodyJobId ?? idempotencyKey ?? `job_${randomBytes(10).toString('hex')}`;
}

/**
 * The account to act as in each application the playbook works on: the one the request
 * names, or the tenant's only connected account for that application. Each must be a
 * connected account of this tenant for that application; problems are added to `issues`.
 */
async function resolveAccounts(
  deps: ApiDeps,
  tenantId: string,
  playbook: Playbook,
  request: SubmitJobBody,
  issues: FieldIssue[],
): Promise<Record<string, string>> {
  const named = request.accounts ?? {};
  const needed = [...new Set(playbook.steps.map((s) => s.app))];
  for (const app of Object.keys(named)) {
    if (!needed.includes(app)) {
      issues.push({
        field: `accounts.${app}`,
        message: `${playbook.id} does not work on ${app}; it uses ${needed.join(', ')}`,
      });
    }
  }
  const resolved: Record<string, string> = {};
  let connected: Awaited<ReturnType<ApiDeps['accounts']['list']>> | undefined;
  for (const app of needed) {
    let accountId = named[app];
    // The tenant's only connected account, as listed: already checked, not read again.
    let account: Account | null | undefined;
    if (accountId === undefined) {
      connected ??= await deps.accounts.list(tenantId);
      const candidates = connected.filter((a) => a.application === app && a.status === 'connected');
      if (candidates.length !== 1) {
        issues.push({
          field: `accounts.${app}`,
          message:
            candidates.length === 0
              ? `no ${app} account is connected for this tenant; connect one first`
              : `this tenant has ${candidates.length} ${app} accounts; name the one to use`,
        });
        continue;
      }
      account = candidates[0] as Account;
      accountId = account.accountId;
    }
    account ??= await deps.accounts.get(tenantId, accountId);
    if (!account || account.tenantId !== tenantId || account.status !== 'connected') {
      issues.push({
        field: `accounts.${app}`,
        message: `${accountId} is not a connected account of this tenant`,
      });
    } else if (account.application !== app) {
      issues.push({
        field: `accounts.${app}`,
        message: `${accountId} is a ${account.application} account, not a ${app} account`,
      });
    } else {
      resolved[app] = accountId;
    }
  }
  return resolved;
}
