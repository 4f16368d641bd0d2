import { describe, expect, it } from 'vitest';
import { AnswerRefusedError, BadRequestError, ConflictError } from '../../../lambdas/lib/api/errors.ts';
import {
  agentAnswerCheck,
  answerCheckFor,
  channelOf,
  PERSON_ANSWER,
  questionCheck,
} from '../../../lambdas/lib/api/jobs/answer-rules.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import type { Job, LedgerEntry, PendingWait } from '../../../lambdas/lib/ledger/types.ts';

const SUBMITTER: Principal = { tenantId: 'acme', keyId: 'blk_submitter', roles: ['submitter', 'approver'] };
const APPROVER: Principal = { tenantId: 'acme', keyId: 'blk_approver', roles: ['approver'] };

/** A job (`submittedBy: null` = one that does not record its submitter). */
function job(wait?: Partial<PendingWait>, submittedBy: string | null = 'blk_submitter'): Job {
  return {
    tenantId: 'acme',
    jobId: 'j1',
    status: wait ? 'WAITING_REVIEW' : 'RUNNING',
    ...(submittedBy ? { submittedBy } : {}),
    ...(wait
      ? {
          wait: {
            kind: 'review',
            step: 's1',
            stepIndex: 0,
            taskToken: 't',
            expiresAt: 'x',
            requestedAt: 'y',
            ...wait,
          },
        }
      : {}),
  } as Job;
}

const request = (reason: string): LedgerEntry =>
  ({ type: 'review-requested', step: 's1', detail: { reason } }) as unknown as LedgerEntry;

describe('Function: channelOf', () => {
  it.each([
    [{}, 'api'],
    [{ 'belay-channel': 'mcp' }, 'mcp'],
    [{ 'Belay-Channel': ' MCP ' }, 'mcp'],
  ])('reads %j as %s', (headers, channel) => {
    expect(channelOf(headers)).toBe(channel);
  });

  it('refuses any other channel', () => {
    expect(() => channelOf({ 'belay-channel': 'console' })).toThrow(BadRequestError);
  });
});

describe('Function: agentAnswerCheck', () => {
  const allowed = { mcpAnswerTenants: new Set(['acme']) };

  it('lets another approver key of a listed tenant answer', () => {
    expect(() => agentAnswerCheck(allowed, APPROVER)(job({ kind: 'approval' }), [], 's1')).not.toThrow();
  });

  it.each([
    [
      'a tenant the deployment does not list',
      { mcpAnswerTenants: new Set<string>() },
      APPROVER,
      job({ kind: 'approval' }),
      'agent_answers_off',
    ],
    ['the key that submitted the job', allowed, SUBMITTER, job({ kind: 'approval' }), 'own_job'],
    [
      'a job that does not say who submitted it',
      allowed,
      APPROVER,
      job({ kind: 'approval' }, null),
      'own_job',
    ],
  ])('refuses %s (403)', (_what, deps, principal, j, code) => {
    const check = (): void => agentAnswerCheck(deps, principal)(j, [], 's1');
    expect(check).toThrow(AnswerRefusedError);
    expect(check).toThrow(expect.objectContaining({ statusCode: 403, code }));
  });

  it('applies only to the MCP channel: a person answers with the route’s role alone', () => {
    expect(answerCheckFor('api', { mcpAnswerTenants: new Set() }, SUBMITTER)).toBe(PERSON_ANSWER);
    expect(() => answerCheckFor('mcp', { mcpAnswerTenants: new Set() }, SUBMITTER)(job(), [], 's1')).toThrow(
      AnswerRefusedError,
    );
  });
});

describe('Function: questionCheck', () => {
  it("lets the submitter answer its agent step's question", () => {
    expect(() => questionCheck(SUBMITTER)(job({ reason: 'agent-question' }), [], 's1')).not.toThrow();
    // Answered already (no wait): the decision's replay is decide's to say, if the last request was a question.
    expect(() => questionCheck(SUBMITTER)(job(), [request('agent-question')], 's1')).not.toThrow();
  });

  it('refuses any other key, even an approver of the tenant', () => {
    expect(() => questionCheck(APPROVER)(job({ reason: 'agent-question' }), [], 's1')).toThrow(
      expect.objectContaining({ statusCode: 403, code: 'not_submitter' }),
    );
  });

  it.each([
    ['an approval', job({ kind: 'approval', reason: 'needs_approval' }), []],
    ['a review of an uncertain write', job({ reason: 'unknown' }), []],
    ['a one-time code', job({ kind: 'mfa' }), []],
    ['a step whose last wait was a review of a changed page', job(), [request('layout_changed')]],
  ])('refuses to answer %s (409 not_a_question)', (_what, j, entries) => {
    const check = (): void => questionCheck(SUBMITTER)(j, entries as LedgerEntry[], 's1');
    expect(check).toThrow(ConflictError);
    expect(check).toThrow(expect.objectContaining({ code: 'not_a_question' }));
  });
});
