import { describe, expect, it } from 'vitest';
import { WebhookUrlError } from '../../../lambdas/lib/notifications/errors.ts';
import { signPayload, verifySignature, webhookSecret } from '../../../lambdas/lib/notifications/signing.ts';
import { checkWebhookUrl } from '../../../lambdas/lib/notifications/store.ts';

describe('Function: signPayload', () => {
  const secret = webhookSecret('deployment-key', 'acme', 'wh_1');

  it('signs the timestamp and the raw body; a receiver checks both', () => {
    const header = signPayload(secret, 1_800_000_000, '{"a":1}');
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, header, '{"a":1}', 1_800_000_010)).toBe(true);
    expect(verifySignature(secret, header, '{"a":2}', 1_800_000_010)).toBe(false);
    expect(verifySignature(secret, header, '{"a":1}', 1_800_001_000)).toBe(false);
    expect(
      verifySignature(webhookSecret('deployment-key', 'acme', 'wh_2'), header, '{"a":1}', 1_800_000_010),
    ).toBe(false);
  });

  it('derives a different secret per tenant and webhook', () => {
    expect(webhookSecret('k', 'acme', 'wh_1')).not.toBe(webhookSecret('k', 'other', 'wh_1'));
    expect(webhookSecret('k', 'acme', 'wh_1')).toMatch(/^whsec_/);
  });
});

describe('Function: checkWebhookUrl', () => {
  it.each([
    'http://hooks.example.com/x',
    'https://10.0.0.5/x',
    'https://169.254.169.254/latest',
    'https://user:pw@example.com/',
    'not a url',
    'http://127.0.0.1:9/x',
  ])('refuses %s', (url) => {
    expect(() => checkWebhookUrl(url, false)).toThrow(WebhookUrlError);
  });
  it('accepts https and, for the local stack only, loopback http', () => {
    expect(checkWebhookUrl('https://hooks.slack.com/services/T/B/X', false)).toBe(
      'https://hooks.slack.com/services/T/B/X',
    );
    expect(checkWebhookUrl('http://127.0.0.1:9/x', true)).toBe('http://127.0.0.1:9/x');
  });
});
