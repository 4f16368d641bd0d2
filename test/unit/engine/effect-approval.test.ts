import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  effectApproval,
  effectChanges,
  SECRET_VALUE,
  sealEffect,
} from '../../../lambdas/lib/engine/effect-approval.ts';
import { type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import type { Effect } from '../../../lambdas/lib/playbooks/contract.ts';

const FIELDS: Effect['fields'] = [
  { name: 'Payee (payee)', value: 'Grace Hopper' },
  { name: 'Amount (amount)', value: '100.00' },
  { name: 'PIN (pin)', value: '4321', secret: true },
];
const ACTIONS = [
  'fill textbox "Payee" = "{{inputs.payee}}"',
  'fill textbox "PIN" = "{{secret:pin}}"',
  'click button "Send"',
];

describe('Function: sealEffect', () => {
  it('hashes the fields and the planned actions together: either one changed changes the hash', () => {
    const sealed = sealEffect({ fields: FIELDS, actions: ACTIONS });
    expect(sealed.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(sealEffect({ fields: FIELDS, actions: [...ACTIONS] }).hash).toBe(sealed.hash);
    const otherAction = sealEffect({
      fields: FIELDS,
      actions: [...ACTIONS.slice(0, 2), 'click button "Send now"'],
    });
    expect(otherAction.hash).not.toBe(sealed.hash);
    const moreActions = sealEffect({ fields: FIELDS, actions: [ACTIONS[0] as string, ...ACTIONS] });
    expect(moreActions.hash).not.toBe(sealed.hash);
    const otherField = sealEffect({
      fields: FIELDS.map((f) => (f.name.startsWith('Amount') ? { ...f, value: '120.00' } : f)),
      actions: ACTIONS,
    });
    expect(otherField.hash).not.toBe(sealed.hash);
    // The same fields with no plan (a scripted step) are another effect.
    expect(sealEffect({ fields: FIELDS }).hash).not.toBe(sealed.hash);
  });

  it('keeps the hash of an effect without actions as it was (fields alone), so earlier approvals still match', () => {
    const pairs = [
      ['Payee (payee)', 'Grace Hopper'],
      ['Amount (amount)', '100.00'],
      ['PIN (pin)', SECRET_VALUE],
    ];
    const expected = createHash('sha256').update(JSON.stringify(pairs)).digest('hex');
    expect(sealEffect({ fields: FIELDS }).hash).toBe(expected);
    expect(sealEffect({ fields: FIELDS }).effect).not.toHaveProperty('actions');
  });

  it('masks a secret field, so its value is neither kept nor hashed, and keeps the actions in order', () => {
    const sealed = sealEffect({ fields: FIELDS, actions: ACTIONS });
    expect(sealed.effect.fields[2]).toEqual({ name: 'PIN (pin)', value: SECRET_VALUE, secret: true });
    expect(JSON.stringify(sealed)).not.toContain('4321');
    expect(sealed.effect.actions).toEqual(ACTIONS);
    const otherPin = sealEffect({
      fields: FIELDS.map((f) => (f.secret ? { ...f, value: '9999' } : f)),
      actions: ACTIONS,
    });
    expect(otherPin.hash).toBe(sealed.hash);
  });
});

describe('Function: effectChanges', () => {
  it('lists the fields that differ, then the actions that differ by position (new, gone, changed)', () => {
    const before: Effect = { fields: FIELDS.slice(0, 2), actions: ACTIONS };
    const after: Effect = {
      fields: [
        { name: 'Payee (payee)', value: 'Grace Hopper' },
        { name: 'Amount (amount)', value: '120.00' },
      ],
      actions: [ACTIONS[0] as string, ACTIONS[1] as string, 'click button "Send now"', 'press Enter'],
    };
    expect(effectChanges(before, after)).toEqual([
      { name: 'Amount (amount)', before: '100.00', after: '120.00' },
      { name: 'action 3', action: true, before: 'click button "Send"', after: 'click button "Send now"' },
      { name: 'action 4', action: true, after: 'press Enter' },
    ]);
    expect(effectChanges(after, before).at(-1)).toEqual({
      name: 'action 4',
      action: true,
      before: 'press Enter',
    });
    expect(effectChanges(before, before)).toEqual([]);
  });
});

describe('Function: effectApproval', () => {
  const entry = (e: Partial<LedgerEntry> & Pick<LedgerEntry, 'type'>): LedgerEntry => ({
    tenantId: 't',
    jobId: 'j',
    entryId: Math.random().toString(36).slice(2),
    step: 's',
    cost: { ...ZERO_COST },
    at: '2026-12-01T10:00:00.000Z',
    ...e,
  });

  it('reads the planned actions back from the prepared entry with the approval on its hash', () => {
    const sealed = sealEffect({ fields: FIELDS, actions: ACTIONS });
    const state = effectApproval(
      [
        entry({ type: 'effect-prepared', detail: { hash: sealed.hash, effect: sealed.effect } }),
        entry({
          type: 'approval-recorded',
          actor: 'p',
          detail: { decision: 'approve', effectHash: sealed.hash },
        }),
      ],
      's',
    );
    expect(state).toEqual({ state: 'approved', hash: sealed.hash, by: 'p', prepared: sealed });
  });
});
