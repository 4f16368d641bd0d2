import { tellIfTurnedRed } from '../lib/engine/checks.ts';
import { releaseJobResources } from '../lib/engine/cleanup.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { REJECTED_ERROR } from '../lib/engine/waits.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import { redactText } from '../lib/redact.ts';

export interface RecordFailureInput extends JobRef {
  /**
   * The execution's state when it failed: `error` is what Step Functions caught (`{ Error, Cause }`,
   * Cause being the Lambda error JSON for task failures); `result` the last task result, when the
   * machine ended on an outcome it has no branch for.
   */
  state?: { error?: { Error?: string; Cause?: string }; result?: unknown };
}

/** Error names the engine knows, and the reason recorded for each. */
const REASONS: Record<string, string> = {
  AccountRevokedError: 'account-revoked',
  RetryBudgetExhaustedError: 'retry-budget-exhausted',
  OutcomeNotVerifiedError: 'outcome-not-verified',
  DeadlineExceededError: 'deadline-exceeded',
  DriftFoundError: 'drift-found',
  QueueTimeoutError: 'queue-timeout',
  JobConfigurationError: 'misconfigured',
  UnknownPlaybookError: 'unknown-playbook',
  CredentialsNotFoundError: 'credentials-not-found',
  IdentitySignedOutError: 'identity-signed-out',
  'States.Timeout': 'wait-timed-out',
  'States.HeartbeatTimeout': 'wait-timed-out',
  [REJECTED_ERROR]: 'rejected',
};

/**
 * The catch-all: records why the job failed, ends its sessions and releases its leases.
 * A job already finished (cancelled while a step ran) keeps its status; only the clean-up runs.
 */
export async function recordFailure(
  deps: EngineDeps,
  input: RecordFailureInput,
): Promise<{ status: string; reason: string }> {
  const { reason, message } = describeFailure(input);
  const job = await deps.ledger.getJob(input.tenantId, input.jobId);
  if (TERMINAL_STATUSES.includes(job.status)) {
    await releaseJobResources(deps, job);
    return { status: job.status, reason: job.failure?.reason ?? reason };
  }
  const failed = await deps.ledger.transition(job.tenantId, job.jobId, 'FAILED', {
    failure: { reason, message },
    entry: { type: 'failed', detail: { reason, message }, cost: { lambdaInvocations: 1, dynamoWrites: 2 } },
  });
  await releaseJobResources(deps, failed);
  await tellIfTurnedRed(deps, failed);
  return { status: 'FAILED', reason };
}

/** Turns what Step Functions caught into a reason and a redacted, bounded message. */
export function describeFailure(input: RecordFailureInput): { reason: string; message: string } {
  const error = input.state?.error?.Error;
  const result = input.state?.result;
  let message = input.state?.error?.Cause ?? '';
  let type = error ?? '';
  try {
    const cause = JSON.parse(message) as { errorType?: string; errorMessage?: string };
    if (cause.errorType) type = cause.errorType;
    if (cause.errorMessage) message = cause.errorMessage;
  } catch {
    // Cause is free text (States.* errors).
  }
  if (!error && result && typeof result === 'object' && 'outcome' in result) {
    return { reason: 'unexpected-outcome', message: `no branch for outcome ${String(result.outcome)}` };
  }
  const reason = REASONS[type] ?? REASONS[error ?? ''] ?? 'error';
  return { reason, message: redactText(message || type || 'unknown failure').slice(0, 1000) };
}
