import { createHash, createPublicKey, verify } from 'node:crypto';
import { canonicalJson } from '../ledger/canonical.ts';
import { type Receipt, SIGNATURE_ALGORITHM, type UnsignedReceipt } from './format.ts';

/**
 * Signing receipts: ECDSA on P-256 over SHA-256, the one algorithm both a KMS key
 * (`ECC_NIST_P256`, `ECDSA_SHA_256`) and `node:crypto` offer, so a receipt signed in AWS is
 * verified offline with nothing but Node. What is signed is the canonical JSON of the receipt
 * without its `signature` (keys sorted, as the ledger's hashes are).
 */

/** A key that signs receipts: KMS in AWS, a key file locally. */
export interface ReceiptSigner {
  /** The public key, PEM (SubjectPublicKeyInfo). */
  publicKey(): Promise<string>;
  /** The DER ECDSA P-256 signature of SHA-256(`message`). */
  sign(message: Buffer): Promise<Buffer>;
}

/** The bytes a receipt's signature covers. */
export function signedBytes(receipt: UnsignedReceipt | Receipt): Buffer {
  const { signature: _s, ...unsigned } = receipt as Receipt;
  return Buffer.from(canonicalJson(unsigned), 'utf8');
}

/** `sha256:<hex>` of a public key's DER SubjectPublicKeyInfo: the key's id in a receipt. */
export function keyFingerprint(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

/** The receipt with its signature. */
export async function signReceipt(unsigned: UnsignedReceipt, signer: ReceiptSigner): Promise<Receipt> {
  const publicKey = await signer.publicKey();
  const value = await signer.sign(signedBytes(unsigned));
  return {
    ...unsigned,
    signature: {
      algorithm: SIGNATURE_ALGORITHM,
      keyId: keyFingerprint(publicKey),
      publicKey,
      value: value.toString('base64'),
    },
  };
}

/** Does `signature` (DER, base64) sign `receipt` under `publicKeyPem`? False for anything malformed. */
export function signatureHolds(receipt: Receipt, publicKeyPem: string): boolean {
  try {
    const key = createPublicKey(publicKeyPem);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return false;
    return verify('sha256', signedBytes(receipt), key, Buffer.from(receipt.signature.value, 'base64'));
  } catch {
    return false;
  }
}
