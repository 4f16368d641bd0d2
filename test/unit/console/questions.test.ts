import { describe, expect, it } from 'vitest';
import { questionCard, questionOf } from '../../../lambdas/lib/api/console/questions.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import { type Job, type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import { checkoutPlaybook } from '../../../playbooks/checkout/index.ts';

const playbook = checkoutPlaybook;
const APPROVER: Principal = { tenantId: 't', roles: ['approver'], keyId: 'blk_approver0001' };
const SUBMITTER: Principal = { tenantId: 't', roles: ['submitter'], keyId: 'blk_submitter001' };

function job(kind: 'approval' | 'review' | 'mfa', reason: string): Job {
  return {
    tenantId: 't',
    jobId: 'j1',
    requestHash: 'h',
    playbook: 'checkout@1',
    inputs: { search: 'mug', payment: { savedCardLast4: '4242' } },
    accounts: { shop: 'a' },
    approvals: [],
    retryBudget: 3,
    status: kind === 'mfa' ? 'WAITING_MFA' : kind === 'review' ? 'WAITING_REVIEW' : 'WAITING_APPROVAL',
    nextStep: 13,
    stepCount: 14,
    sessions: {},
    retriesUsed: 0,
    cost: { ...ZERO_COST },
    version: 3,
    createdAt: '2026-12-01T10:00:00.000Z',
    updatedAt: '2026-12-01T10:00:00.000Z',
    wait: {
      kind,
      step: 'place-order',
      stepIndex: 13,
      taskToken: 'secret-token',
      expiresAt: '2026-12-08T10:00:00.000Z',
      requestedAt: '2026-12-01T10:00:00.000Z',
      reason,
    },
  };
}

const entry = (e: Partial<LedgerEntry> & Pick<LedgerEntry, 'type'>): LedgerEntry => ({
  tenantId: 't',
  jobId: 'j1',
  entryId: Math.random().toString(36).slice(2),
  cost: { ...ZERO_COST },
  at: '2026-12-01T10:00:00.000Z',
  ...e,
});

describe('Function: questionOf', () => {
  it('asks whether an uncertain write happened, with what the probe found and a resolution to choose', () => {
    const entries = [
      entry({ type: 'step-completed', step: 'review' }),
      entry({ type: 'step-started', step: 'place-order' }),
      entry({
        type: 'invocation',
        step: 'place-order',
        detail: { function: 'Reconcile', outcome: 'unknown', finding: 'the orders page did not load' },
      }),
      entry({ type: 'review-requested', step: 'place-order', detail: { reason: 'unknown' } }),
    ];
    const q = questionOf(job('review', 'unknown'), entries, playbook);
    expect(q).toMatchObject({
      heading: 'Did step place-order happen?',
      finding: 'the orders page did not load',
      asksResolution: true,
    });
    const card = questionCard(q as NonNullable<typeof q>, APPROVER, 'csrf-1').value;
    expect(card).toContain('name="resolution" value="done"');
    expect(card).toContain('What the job found:</strong> the orders page did not load');
    expect(card).not.toContain('secret-token');
  });

  it('shows a question of a kind it does not know (an agent asking a person) with its text and the answer form', () => {
    const entries = [
      entry({
        type: 'review-requested',
        step: 'place-order',
        detail: { reason: 'ask_person', question: 'Which <b>size</b> should I pick?' },
      }),
    ];
    const q = questionOf(job('review', 'ask_person'), entries, playbook);
    expect(q?.heading).toBe('The job asks you');
    const card = questionCard(q as NonNullable<typeof q>, APPROVER, 'c').value;
    expect(card).toContain('Which &lt;b&gt;size&lt;/b&gt; should I pick?');
    expect(card).toContain('value="approve"');
  });

  it('gives a submitter no approve button, and anyone the one-time code form', () => {
    const approval = questionOf(job('approval', 'needs_approval'), [], playbook);
    expect(questionCard(approval as NonNullable<typeof approval>, SUBMITTER, 'c').value).not.toContain(
      'value="approve"',
    );
    const mfa = questionOf(job('mfa', 'mfa_required'), [], playbook);
    const card = questionCard(mfa as NonNullable<typeof mfa>, SUBMITTER, 'c').value;
    expect(card).toContain('autocomplete="one-time-code"');
    expect(card).toContain('A one-time code for shop');
  });
});
