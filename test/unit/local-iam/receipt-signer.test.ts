import { describe, expect, it, vi } from 'vitest';
import { ReceiptSigningError } from '../../../lambdas/lib/receipts/errors.ts';
import type { ReceiptSigner } from '../../../lambdas/lib/receipts/sign.ts';
import type { EnforcementSpec } from '../../../local/iam/policies.ts';
import { iamRequests } from '../../../local/iam/requests.ts';
import { policyHeldSigner } from '../../../local/receipt-signer.ts';

const KEY = 'arn:aws:kms:us-east-1:000000000000:key/ReceiptsKey1234-local';
const facts = { region: 'us-east-1', account: '000000000000', tables: {} };
const specWith = (actions: string[]): EnforcementSpec => ({
  facts,
  policy: {
    constructId: 'ApiHandler',
    functionName: 'belay-api',
    callerArn: 'arn:aws:sts::000000000000:assumed-role/Belay-ApiHandlerRole/belay-api',
    statements: actions.length ? [{ Effect: 'Allow', Action: actions, Resource: KEY }] : [],
  },
});
const fileSigner = (): ReceiptSigner => ({
  publicKey: vi.fn(async () => 'PEM'),
  sign: vi.fn(async () => Buffer.from('sig')),
});

describe('Function: policyHeldSigner', () => {
  it('signs with the key file when the policy allows kms:Sign and kms:GetPublicKey on the key', async () => {
    const inner = fileSigner();
    const signer = policyHeldSigner(inner, specWith(['kms:Sign', 'kms:GetPublicKey']), KEY, () => undefined);
    await expect(signer.publicKey()).resolves.toBe('PEM');
    await expect(signer.sign(Buffer.from('m'))).resolves.toEqual(Buffer.from('sig'));
  });

  it('refuses as IAM would, reports the refusal, and never touches the key file', async () => {
    const inner = fileSigner();
    const refusals: unknown[] = [];
    const signer = policyHeldSigner(inner, specWith(['kms:GetPublicKey']), KEY, (r) => refusals.push(r));
    await expect(signer.sign(Buffer.from('m'))).rejects.toThrow(ReceiptSigningError);
    await expect(signer.sign(Buffer.from('m'))).rejects.toThrow(/AccessDeniedException: .*kms:Sign/);
    expect(inner.sign).not.toHaveBeenCalled();
    expect(refusals[0]).toMatchObject({ functionName: 'belay-api', action: 'kms:Sign', resource: KEY });
  });

  it('refuses every receipt when the template names no key to the API', async () => {
    const signer = policyHeldSigner(fileSigner(), specWith(['kms:Sign']), undefined, () => undefined);
    await expect(signer.publicKey()).rejects.toThrow(/names no receipt key/);
  });
});

describe('Function: iamRequests (KMS)', () => {
  it.each([
    [KEY, KEY],
    [
      '1234abcd-12ab-34cd-56ef-1234567890ab',
      'arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    ],
    ['alias/belay-receipts', 'arn:aws:kms:us-east-1:000000000000:alias/belay-receipts'],
  ])('authorizes Sign with %s on %s', (keyId, resource) => {
    expect(iamRequests(facts, 'KMSClient', 'SignCommand', { KeyId: keyId })).toEqual([
      { action: 'kms:Sign', resource },
    ]);
  });
});
