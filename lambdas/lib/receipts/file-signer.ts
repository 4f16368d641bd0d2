import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ReceiptSigningError } from './errors.ts';
import type { ReceiptSigner } from './sign.ts';

/**
 * The local stack's receipt key: an ECDSA P-256 private key in a PEM file (PKCS#8), created on
 * first use with mode 0600 and kept across restarts, so receipts issued earlier still verify
 * against the same public key. In AWS the key is in KMS and never leaves it (`kms-signer.ts`).
 *
 * @example
 * const signer = createFileSigner('.local/receipt-key.pem');
 * const receipt = await signReceipt(unsigned, signer);
 */
export function createFileSigner(path: string): ReceiptSigner {
  let key: Promise<KeyObject> | undefined;
  const load = (): Promise<KeyObject> => {
    key ??= loadOrCreate(path).catch((err: unknown) => {
      key = undefined;
      throw new ReceiptSigningError(`the receipt key file cannot be used: ${(err as Error).message}`, {
        cause: err,
      });
    });
    return key;
  };
  return {
    async publicKey() {
      return createPublicKey(await load())
        .export({ type: 'spki', format: 'pem' })
        .toString();
    },
    async sign(message) {
      return sign('sha256', message, await load());
    },
  };
}

async function loadOrCreate(path: string): Promise<KeyObject> {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const created = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await mkdir(dirname(path), { recursive: true });
    try {
      // `wx`: of two processes creating it at once, one writes and the other reads its key.
      await writeFile(path, created, { mode: 0o600, flag: 'wx' });
      pem = created;
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
      pem = await readFile(path, 'utf8');
    }
  }
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('the key is not an ECDSA P-256 private key');
  }
  return key;
}
