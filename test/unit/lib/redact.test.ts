import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import {
  ALL_TENANTS,
  MAX_SECRET_BYTES,
  maskSecrets,
  maskSecretText,
  REDACTED,
  redact,
  redactText,
  registeredSecretsSize,
  registerSecret,
  withTenantScope,
} from '../../../lambdas/lib/redact.ts';

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

  it('masks secrets and leaves every number exact in what the engine keeps (maskSecrets)', () => {
    const key = `blk_${'y'.repeat(32)}`;
    const kept = {
      phone: '+4479111234567',
      invoice: '4111 1111 1111 1111',
      iban: 'GB82 WEST 1234 5698 7654 32',
      password: 'hunter2',
      note: `Bearer abc.def.ghi and ${key}`,
    };
    expect(maskSecrets(kept)).toEqual({
      phone: '+4479111234567',
      invoice: '4111 1111 1111 1111',
      iban: 'GB82 WEST 1234 5698 7654 32',
      password: REDACTED,
      note: `Bearer ${REDACTED} and ${REDACTED}`,
    });
    expect(maskSecretText('call +4479111234567')).toBe('call +4479111234567');
    // People see the same values masked.
    expect(redactText('call +4479111234567')).toBe('call +[card ****4567]');
  });

  it("keeps a job's own numbers that it is told to keep, and masks the others", () => {
    const text = 'typed +4479111234567, page shows 4242 4242 4242 4242';
    expect(redactText(text, ALL_TENANTS, { keepNumbers: ['+44 7911 123 4567'] })).toBe(
      'typed +4479111234567, page shows [card ****4242]',
    );
  });

  it('redacts evidence values that look like card numbers even under harmless keys', () => {
    expect(redact({ note: '4242424242424242', total: 12 })).toEqual({
      note: '[card ****4242]',
      total: 12,
    });
  });
});

describe('registered secrets', () => {
  const secret = 'Tenant-A-pw-7d31';
  registerSecret('tenant-a', secret);

  it("masks a tenant's secret in that tenant's texts, and leaves another tenant's texts as they are", () => {
    const text = `name ${secret} here`;
    expect(withTenantScope('tenant-a', () => redactText(text))).toBe(`name ${REDACTED} here`);
    expect(withTenantScope('tenant-a', () => redact({ note: text }))).toEqual({
      note: `name ${REDACTED} here`,
    });
    // Masking it for tenant B would tell B that a string it chose is someone's password.
    expect(withTenantScope('tenant-b', () => redactText(text))).toBe(text);
    expect(withTenantScope('tenant-b', () => redact({ note: text }))).toEqual({ note: text });
    expect(redactText(text, { tenantId: 'tenant-b' })).toBe(text);
    expect(redactText(text, { tenantId: 'tenant-a' })).toBe(`name ${REDACTED} here`);
    // No tenant at all (a public route): none of the registered secrets.
    expect(withTenantScope('', () => redactText(text))).toBe(text);
    // Patterns apply in every scope.
    expect(withTenantScope('tenant-b', () => redactText('4242 4242 4242 4242'))).toBe('[card ****4242]');
  });

  it("masks every tenant's secrets outside any tenant's work, and in logs whoever runs", () => {
    expect(redactText(`x ${secret}`)).toBe(`x ${REDACTED}`);
    expect(redactText(`x ${secret}`, ALL_TENANTS)).toBe(`x ${REDACTED}`);
    const lines: string[] = [];
    const log = createLogger({ sink: (line) => lines.push(line) });
    withTenantScope('tenant-b', () => log.info(`saw ${secret}`, { detail: `also ${secret}` }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(secret);
    expect(lines[0]).toContain(REDACTED);
  });

  it('masks a value two tenants registered for both, and keeps the scope across awaits', async () => {
    registerSecret('tenant-c', secret);
    const masked = await withTenantScope('tenant-c', async () => {
      await new Promise((r) => setTimeout(r, 5));
      return redactText(secret);
    });
    expect(masked).toBe(REDACTED);
    expect(withTenantScope('tenant-a', () => redactText(secret))).toBe(REDACTED);
    expect(withTenantScope('tenant-d', () => redactText(secret))).toBe(secret);
  });
});

describe('the registry of secrets, bounded per tenant and in bytes', () => {
  it("keeps a tenant's secret however many another tenant registers", () => {
    const mine = 'Tenant-E-pw-only-mine';
    registerSecret('tenant-e', mine);
    for (let i = 0; i < 1_100; i++) registerSecret('tenant-f', `f-password-${i}`);
    expect(redactText(`x ${mine}`, { tenantId: 'tenant-e' })).toBe(`x ${REDACTED}`);
    expect(redactText(`x ${mine}`, ALL_TENANTS)).toBe(`x ${REDACTED}`);
    // Tenant F keeps only its newest.
    expect(redactText('f-password-1099', { tenantId: 'tenant-f' })).toBe(REDACTED);
    expect(redactText('f-password-0', { tenantId: 'tenant-f' })).toBe('f-password-0');
  });

  it('does not take values longer than a credential may be, and stays within its byte bounds', () => {
    const huge = 'y'.repeat(240 * 1024);
    registerSecret('tenant-g', huge);
    expect(redactText(huge.slice(0, 50), { tenantId: 'tenant-g' })).toBe(huge.slice(0, 50));
    for (let i = 0; i < 900; i++) registerSecret('tenant-g', `${i}-${'z'.repeat(1000)}`);
    for (let t = 0; t < 300; t++) registerSecret(`tenant-h${t}`, `h-${t}-${'w'.repeat(1000)}`);
    const size = registeredSecretsSize();
    expect(size.bytes).toBeLessThanOrEqual(MAX_SECRET_BYTES);
    expect(size.values).toBeLessThanOrEqual(2_000);
  });
});
