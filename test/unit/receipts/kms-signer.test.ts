import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { ReceiptSigningError } from '../../../lambdas/lib/receipts/errors.ts';
import type { UnsignedReceipt } from '../../../lambdas/lib/receipts/format.ts';
import { createKmsSigner, type KmsSender } from '../../../lambdas/lib/receipts/kms-signer.ts';
import {
  keyFingerprint,
  signatureHolds,
  signedBytes,
  signReceipt,
} from '../../../lambdas/lib/receipts/sign.ts';

const KEY_ARN = 'arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const unsigned = {
  format: 'belay.receipt/1',
  issuedAt: '2030-01-01T00:00:00.000Z',
  job: {
    tenantId: 't',
    jobId: 'j',
    playbook: 'p@1',
    status: 'RUNNING',
    createdAt: 'x',
    stepCount: 1,
    stepsCompleted: 0,
  },
  chain: { algorithm: 'belay.ledger.chain/1', length: 0, unchained: [] },
  entries: [],
  writes: [],
} as UnsignedReceipt;

/** KMS as the signer uses it: the public key as DER, a signature of the digest it is sent (checked to be the message's). */
function fakeKms(keySpec = 'ECC_NIST_P256'): KmsSender & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    calls,
    async send(command) {
      calls.push(command);
      if (command instanceof GetPublicKeyCommand) {
        return { KeySpec: keySpec, PublicKey: pair.publicKey.export({ type: 'spki', format: 'der' }) };
      }
      if (command instanceof SignCommand) {
        const message = signedBytes(unsigned);
        expect(command.input).toMatchObject({
          KeyId: KEY_ARN,
          MessageType: 'DIGEST',
          SigningAlgorithm: 'ECDSA_SHA_256',
        });
        expect(Buffer.from(command.input.Message as Uint8Array)).toEqual(
          createHash('sha256').update(message).digest(),
        );
        // ECDSA over that digest is ECDSA-SHA256 over the message: what node:crypto verifies.
        return { Signature: sign('sha256', message, pair.privateKey) };
      }
      throw new Error('unexpected command');
    },
  };
}

describe('Function: createKmsSigner', () => {
  it('signs the digest of the receipt with the KMS key, verifiable with node:crypto alone', async () => {
    const kms = fakeKms();
    const receipt = await signReceipt(unsigned, createKmsSigner(kms, KEY_ARN));
    const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(receipt.signature).toMatchObject({
      algorithm: 'ECDSA_P256_SHA256',
      keyId: keyFingerprint(pem),
      publicKey: pem,
    });
    expect(signatureHolds(receipt, pem)).toBe(true);
  });

  it('reads the public key once per process', async () => {
    const kms = fakeKms();
    const signer = createKmsSigner(kms, KEY_ARN);
    await signer.publicKey();
    await signer.publicKey();
    expect(kms.calls.filter((c) => c instanceof GetPublicKeyCommand)).toHaveLength(1);
  });

  it('refuses a key of another spec, and says which', async () => {
    await expect(createKmsSigner(fakeKms('RSA_2048'), KEY_ARN).publicKey()).rejects.toThrow(
      /RSA_2048, not ECC_NIST_P256/,
    );
  });

  it('turns a KMS failure into a retryable ReceiptSigningError naming only the error', async () => {
    const denied = Object.assign(new Error('User: arn:... is not authorized to perform: kms:Sign'), {
      name: 'AccessDeniedException',
    });
    const signer = createKmsSigner({ send: async () => Promise.reject(denied) }, KEY_ARN);
    const failure = signer.sign(Buffer.from('m'));
    await expect(failure).rejects.toBeInstanceOf(ReceiptSigningError);
    await expect(failure).rejects.toMatchObject({
      retryable: true,
      message: 'KMS could not sign the receipt: AccessDeniedException',
    });
  });
});
