import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Credentials } from '../playbooks/contract.ts';
import { registerSecret } from '../redact.ts';
import { CredentialsAccessDeniedError, CredentialsNotFoundError } from './errors.ts';
import type { WritableSecretStore } from './types.ts';

export type { WritableSecretStore } from './types.ts';

/**
 * The store of a function that must never read credentials: every call is refused, as AWS
 * would refuse it for lack of the permission, but at once and saying why.
 */
export function createNoSecretStore(): WritableSecretStore {
  const refuse = async (_tenantId: string, accountId: string): Promise<never> => {
    throw new CredentialsAccessDeniedError(accountId);
  };
  return { getCredentials: refuse, putCredentials: refuse, deleteCredentials: refuse };
}

const SAFE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The local stack's secret store: one AES-256-GCM encrypted file per account under a
 * directory (`.local/secrets`), with a 32-byte key kept beside it (mode 0600) or given.
 * The AWS stack uses Secrets Manager instead; the interface is the same.
 */
export async function createFileSecretStore(dir: string, keyHex?: string): Promise<WritableSecretStore> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const key = keyHex ? Buffer.from(keyHex, 'hex') : await loadOrCreateKey(join(dir, '.key'));
  if (key.length !== 32) throw new Error('the secret store key must be 32 bytes (64 hex characters)');

  const fileFor = (tenantId: string, accountId: string): string => {
    if (!SAFE.test(tenantId) || !SAFE.test(accountId))
      throw new CredentialsNotFoundError(tenantId, accountId);
    return join(dir, `${tenantId}--${accountId}.enc`);
  };

  return {
    async getCredentials(tenantId, accountId) {
      let blob: Buffer;
      try {
        blob = await readFile(fileFor(tenantId, accountId));
      } catch (cause) {
        throw new CredentialsNotFoundError(tenantId, accountId, { cause });
      }
      const iv = blob.subarray(0, 12);
      const tag = blob.subarray(12, 28);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAuthTag(tag);
      // The tenant and account are bound as associated data: a file copied to another name does not decrypt.
      decipher.setAAD(Buffer.from(`${tenantId}/${accountId}`));
      const plain = Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()]);
      return registered(tenantId, JSON.parse(plain.toString('utf8')) as Credentials);
    },
    async putCredentials(tenantId, accountId, credentials) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(`${tenantId}/${accountId}`));
      const body = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
      await writeFile(fileFor(tenantId, accountId), Buffer.concat([iv, cipher.getAuthTag(), body]), {
        mode: 0o600,
      });
      // Stored: masked from now on.
      registered(tenantId, credentials);
    },
    async deleteCredentials(tenantId, accountId) {
      await rm(fileFor(tenantId, accountId), { force: true });
    },
  };
}

/** Credentials a store holds (read or just stored) are masked from then on: in logs, and in the tenant's own texts. */
export function registered(tenantId: string, credentials: Credentials): Credentials {
  registerSecret(tenantId, credentials.password);
  registerSecret(tenantId, credentials.totpSecret);
  return credentials;
}

async function loadOrCreateKey(path: string): Promise<Buffer> {
  try {
    return Buffer.from((await readFile(path, 'utf8')).trim(), 'hex');
  } catch {
    const key = randomBytes(32);
    await writeFile(path, key.toString('hex'), { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
    return Buffer.from((await readFile(path, 'utf8')).trim(), 'hex');
  }
}
