import { createHash, createPublicKey } from 'node:crypto';
import { kmsSdk } from '../aws/sdk/client-kms.ts';
import { ReceiptSigningError } from './errors.ts';
import type { ReceiptSigner } from './sign.ts';

/** What the signer sends KMS: a client, or a stand-in in tests. */
export interface KmsSender {
  send(command: unknown): Promise<unknown>;
}

/**
 * Receipts signed by a KMS key (`ECC_NIST_P256`, usage `SIGN_VERIFY`): the private key never
 * leaves KMS, every signature is in CloudTrail, and only the API's role may `kms:Sign` with it.
 * The receipt's canonical JSON is hashed here and KMS signs the digest (`MessageType: DIGEST`;
 * a receipt exceeds the 4 KB KMS takes as a raw message). The public key is read once per process.
 *
 * @example
 * const signer = createKmsSigner(new KMSClient({}), process.env.BELAY_RECEIPT_KEY_ID);
 */
export function createKmsSigner(kms: KmsSender, keyId: string): ReceiptSigner {
  let publicKey: Promise<string> | undefined;
  const { GetPublicKeyCommand, SignCommand } = kmsSdk();
  const failed = (what: string, err: unknown): ReceiptSigningError =>
    new ReceiptSigningError(`KMS could not ${what}: ${(err as Error).name ?? 'error'}`, {
      cause: err,
      retryable: true,
    });
  return {
    publicKey() {
      publicKey ??= (async () => {
        let out: { PublicKey?: Uint8Array; KeySpec?: string };
        try {
          out = (await kms.send(new GetPublicKeyCommand({ KeyId: keyId }))) as typeof out;
        } catch (err) {
          publicKey = undefined;
          throw failed('give the receipt key', err);
        }
        if (!out.PublicKey || out.KeySpec !== 'ECC_NIST_P256') {
          publicKey = undefined;
          throw new ReceiptSigningError(`the receipt key is ${out.KeySpec ?? 'unknown'}, not ECC_NIST_P256`);
        }
        return createPublicKey({ key: Buffer.from(out.PublicKey), format: 'der', type: 'spki' })
          .export({ type: 'spki', format: 'pem' })
          .toString();
      })();
      return publicKey;
    },
    async sign(message) {
      const digest = createHash('sha256').update(message).digest();
      let out: { Signature?: Uint8Array };
      try {
        out = (await kms.send(
          new SignCommand({
            KeyId: keyId,
            Message: digest,
            MessageType: 'DIGEST',
            SigningAlgorithm: 'ECDSA_SHA_256',
          }),
        )) as typeof out;
      } catch (err) {
        throw failed('sign the receipt', err);
      }
      if (!out.Signature) throw new ReceiptSigningError('KMS returned no signature');
      return Buffer.from(out.Signature);
    },
  };
}
