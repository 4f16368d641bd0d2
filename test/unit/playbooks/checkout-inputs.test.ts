import { describe, expect, it } from 'vitest';
import { checkoutInputSchema } from '../../../playbooks/checkout/inputs.ts';

describe('Playbook checkout@1: inputs', () => {
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
  ])('refuse %s', (_label, change, path) => {
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
});
