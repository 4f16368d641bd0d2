import { describe, expect, it } from 'vitest';
import { checkoutInputSchema } from '../../../lambdas/lib/playbooks/checkout/index.ts';
import { crmBillingSyncInputSchema } from '../../../lambdas/lib/playbooks/crm-billing-sync/index.ts';
import { UnknownPlaybookError } from '../../../lambdas/lib/playbooks/errors.ts';
import { getPlaybook, listPlaybooks } from '../../../lambdas/lib/playbooks/registry.ts';

describe('Playbook registry', () => {
  it('lists the playbooks by name@version', () => {
    expect(listPlaybooks().map((p) => p.id)).toEqual([
      'checkout@1',
      'crm-billing-sync@1',
      'crm-contact-agent@1',
    ]);
    expect(getPlaybook('checkout@1').steps).toHaveLength(14);
    expect(getPlaybook('crm-billing-sync@1').steps.map((s) => [s.id, s.app, s.kind])).toEqual([
      ['crm-sign-in', 'crm', 'read'],
      ['billing-sign-in', 'billing', 'read'],
      ['update-crm-customer', 'crm', 'write'],
      ['update-billing-address', 'billing', 'write'],
      ['verify-crm-record', 'crm', 'read'],
      ['verify-billing-account', 'billing', 'read'],
    ]);
  });

  it('throws UnknownPlaybookError naming the known ids', () => {
    const error = (() => {
      try {
        getPlaybook('checkout@2');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnknownPlaybookError);
    expect((error as UnknownPlaybookError).known).toEqual([
      'checkout@1',
      'crm-billing-sync@1',
      'crm-contact-agent@1',
    ]);
    expect((error as Error).message).toContain('checkout@1, crm-billing-sync@1, crm-contact-agent@1');
  });

  it('gives every write a probe and every step an application the playbook declares', () => {
    for (const playbook of listPlaybooks()) {
      for (const step of playbook.steps) {
        expect(playbook.applications[step.app], `${playbook.id} ${step.id}`).toBeDefined();
        expect(typeof step.probe === 'function', `${playbook.id} ${step.id}`).toBe(step.kind === 'write');
      }
      expect(new Set(playbook.steps.map((s) => s.id)).size).toBe(playbook.steps.length);
    }
  });

  it.each([
    ['a card number', { payment: { savedCardLast4: '4242', cardNumber: '4242424242424242' } }, ['payment']],
    ['an unknown field', { password: 'x' }, []],
    [
      'the same item twice',
      {
        items: [
          { sku: 'NB-A5-DOT', quantity: 1 },
          { sku: 'NB-A5-DOT', quantity: 2 },
        ],
      },
      ['items'],
    ],
    [
      'a quantity of 11',
      {
        items: [
          { sku: 'NB-A5-DOT', quantity: 11 },
          { sku: 'PEN-GEL-3PK', quantity: 1 },
        ],
      },
      ['items', 0, 'quantity'],
    ],
  ])('checkout inputs refuse %s', (_label, change, path) => {
    const valid = {
      search: 'notebook',
      items: [
        { sku: 'NB-A5-DOT', quantity: 1 },
        { sku: 'NB-A4-LINED', quantity: 2 },
      ],
      shippingAddress: { name: 'A', line1: '1 A St', city: 'Bath', postcode: 'BA1 1AA', country: 'GB' },
      shippingMethod: 'standard',
      payment: { savedCardLast4: '4242' },
    };
    expect(checkoutInputSchema.safeParse(valid).success).toBe(true);
    const result = checkoutInputSchema.safeParse({ ...valid, ...change });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(path);
  });

  it('crm-billing-sync inputs need an email and a full address', () => {
    const ok = {
      customerEmail: 'a@b.example',
      address: { line1: 'x', city: 'y', postcode: 'z', country: 'GB' },
    };
    expect(crmBillingSyncInputSchema.safeParse(ok).success).toBe(true);
    expect(
      crmBillingSyncInputSchema.safeParse({ ...ok, customerEmail: 'nope' }).error?.issues[0]?.path,
    ).toEqual(['customerEmail']);
    expect(crmBillingSyncInputSchema.safeParse({ ...ok, address: { line1: 'x' } }).success).toBe(false);
  });
});
