import { describe, expect, it } from 'vitest';
import { REDACTED, redact, redactEvidence, redactText } from '../../lambdas/lib/redact.ts';

describe('redact', () => {
  it.each([
    ['password', 'hunter2'],
    ['otpCode', '123456'],
    ['code', '654321'],
    ['cardNumber', '4242424242424242'],
    ['cvc', '123'],
    ['apiKey', 'blk_abcdefabcdefabcdefabcdef'],
    ['taskToken', 'AAAAKgAAAAIAAAAAAAAAA'],
    ['authorization', 'Bearer abc.def.ghi'],
  ])('masks the value of %s', (key, value) => {
    expect(redact({ [key]: value })).toEqual({ [key]: REDACTED });
  });

  it('keeps the last four digits of a card number in free text', () => {
    expect(redactText('paid with 4242 4242 4242 4242 today')).toBe('paid with [card ****4242] today');
    expect(redactText('card 4000-0000-0000-0002')).toBe('card [card ****0002]');
  });

  it('leaves short numbers, order ids and totals alone', () => {
    expect(redactText('order ORD-1042 total 59.90 qty 3')).toBe('order ORD-1042 total 59.90 qty 3');
  });

  it('masks bearer tokens and API keys inside text', () => {
    const key = `blk_${'x'.repeat(32)}`;
    expect(redactText(`Authorization: Bearer ${key}`)).not.toContain(key);
    expect(redactText(`key ${key} used`)).toBe(`key ${REDACTED} used`);
  });

  it('walks nested objects and arrays without mutating them', () => {
    const input = { job: { steps: [{ evidence: { password: 'p', orderId: 'A1' } }] } };
    const out = redact(input);
    expect(out.job.steps[0]?.evidence).toEqual({ password: REDACTED, orderId: 'A1' });
    expect(input.job.steps[0]?.evidence.password).toBe('p');
  });

  it('cuts cycles', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(redact(a)).toEqual({ name: 'a', self: '[truncated]' });
  });

  it('redacts evidence values that look like card numbers even under harmless keys', () => {
    expect(redactEvidence({ note: '4242424242424242', total: 12 })).toEqual({
      note: '[card ****4242]',
      total: 12,
    });
  });
});
