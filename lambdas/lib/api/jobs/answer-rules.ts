import type { Principal } from '../../auth/api-keys.ts';
import { AGENT_QUESTION_REASON, WAIT_ENTRY } from '../../engine/waits.ts';
import type { Job, LedgerEntry } from '../../ledger/types.ts';
import type { ApiDeps } from '../deps.ts';
import { AnswerRefusedError, BadRequestError, ConflictError } from '../errors.ts';
import { header } from '../events.ts';

/**
 * Who may answer a job's wait, beyond the role its route needs. People answer approvals,
 * one-time codes and reviews; an agent (a request that says it comes through MCP) answers
 * them only where the deployment allows it for the tenant, and never with the key that
 * submitted the job: a job's submitter does not approve its own write. An agent step's
 * question (`ask_person`) goes back to whoever submitted the job.
 */

/** The request header an MCP client's calls carry (`Belay-Channel: mcp`); absent = the HTTP API. */
export const CHANNEL_HEADER = 'Belay-Channel';

export type Channel = 'api' | 'mcp';

/** The channel a request names; any value but `mcp` (or none) is a 400. */
export function channelOf(headers: Record<string, string | undefined> | undefined): Channel {
  const value = header(headers, CHANNEL_HEADER);
  if (value === undefined) return 'api';
  if (value.trim().toLowerCase() === 'mcp') return 'mcp';
  throw new BadRequestError('invalid_request', `the ${CHANNEL_HEADER} header is "mcp" or absent`, {
    details: [{ field: `header:${CHANNEL_HEADER}`, message: 'use mcp, or leave it out' }],
  });
}

/**
 * A check of the job (and its ledger) before an answer for `step` is recorded: throws an
 * `ApiError` to refuse, and nothing is written.
 */
export type AnswerCheck = (job: Job, entries: readonly LedgerEntry[], step: string) => void;

/** A person's answer: the route's role is all it needs. */
export const PERSON_ANSWER: AnswerCheck = () => undefined;

/**
 * An agent's answer to a person's wait (approval, review, one-time code), through MCP: only
 * for tenants the deployment lists (`BELAY_MCP_ANSWER_TENANTS`), and never with the key that
 * submitted the job. The route has already required the approver role.
 */
export function agentAnswerCheck(deps: Pick<ApiDeps, 'mcpAnswerTenants'>, principal: Principal): AnswerCheck {
  return (job) => {
    if (!deps.mcpAnswerTenants.has(principal.tenantId)) {
      throw new AnswerRefusedError(
        'agent_answers_off',
        'approvals, one-time codes and reviews are answered by people for this tenant: use the console or the HTTP API with an approver key',
      );
    }
    if (job.submittedBy === undefined || job.submittedBy === principal.keyId) {
      throw new AnswerRefusedError(
        'own_job',
        job.submittedBy === undefined
          ? `job ${job.jobId} does not record the key that submitted it, so no agent may answer its waits; a person decides`
          : `the key that submitted job ${job.jobId} cannot answer its approvals, codes or reviews; a person, or another approver key, decides`,
      );
    }
  };
}

/** The mcp channel's check for an answer to a person's wait, or a person's (no further check). */
export function answerCheckFor(
  channel: Channel,
  deps: Pick<ApiDeps, 'mcpAnswerTenants'>,
  principal: Principal,
): AnswerCheck {
  return channel === 'mcp' ? agentAnswerCheck(deps, principal) : PERSON_ANSWER;
}

/**
 * An answer to an agent step's question: only the key that submitted the job gives it, and
 * only to a question (a review the step asked for with `ask_person`), never to an approval,
 * a code or a review of an uncertain write, which stay with people.
 */
export function questionCheck(principal: Principal): AnswerCheck {
  return (job, entries, step) => {
    if (job.submittedBy === undefined || job.submittedBy !== principal.keyId) {
      throw new AnswerRefusedError(
        'not_submitter',
        `only the key that submitted job ${job.jobId} answers its agent's questions; people answer them in the console`,
      );
    }
    const wait = job.wait?.step === step ? job.wait : undefined;
    const request = entries.findLast(
      (e) => e.step === step && (e.type === WAIT_ENTRY.review || e.type === WAIT_ENTRY.approval),
    );
    const asked = wait
      ? wait.kind === 'review' && wait.reason === AGENT_QUESTION_REASON
      : request === undefined || request.detail?.reason === AGENT_QUESTION_REASON;
    if (!asked) {
      const what = wait ? `${wait.kind} (${wait.reason ?? wait.kind})` : String(request?.detail?.reason);
      throw new ConflictError(
        'not_a_question',
        `step ${step} of job ${job.jobId} waits for ${what}, which a person answers; only an agent step's question is answered this way`,
        { details: { status: job.status, ...(wait ? { waitingFor: { kind: wait.kind, step } } : {}) } },
      );
    }
  };
}
