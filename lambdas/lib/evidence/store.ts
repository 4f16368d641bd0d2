import { createHash, randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { s3Sdk } from '../aws/sdk/client-s3.ts';
import { ScreenshotNotFoundError, ScreenshotsDisabledError } from './errors.ts';

/**
 * Where screenshots are kept: S3 in AWS and, locally, the local stack's S3-compatible server,
 * both through `@aws-sdk/client-s3`. Every object lives under its tenant's and job's prefix
 * (`tenants/<tenant>/jobs/<job>/screenshots/...`), and a read names the tenant and job it is
 * for: a key outside that prefix is the same "not found" as a missing one.
 */
export interface ScreenshotStore {
  /** False when no bucket is configured: nothing is captured or served. */
  readonly enabled: boolean;
  /** Stores a JPEG under the job's prefix; returns its key, size and sha256. */
  put(
    ref: { tenantId: string; jobId: string },
    name: string,
    body: Buffer,
  ): Promise<{ key: string; bytes: number; sha256: string }>;
  /** The JPEG at `key`, if it belongs to this tenant's job; else `ScreenshotNotFoundError`. */
  get(ref: { tenantId: string; jobId: string }, key: string): Promise<Buffer>;
}

/** The prefix of a job's screenshots. */
export function screenshotPrefix(tenantId: string, jobId: string): string {
  return `tenants/${tenantId}/jobs/${jobId}/screenshots/`;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** A new object name for a screenshot of `step` (unique: a retried step keeps both). */
export function screenshotName(stepIndex: number, step: string, reason: string): string {
  const safeStep = step.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);
  return `${String(stepIndex).padStart(3, '0')}-${safeStep}-${reason}-${randomBytes(4).toString('hex')}.jpg`;
}

/**
 * Screenshots in an S3 bucket (encrypted, private, expiring with the jobs: see the stack).
 *
 * @example
 * const store = createS3ScreenshotStore(s3ClientFromEnv(), 'belay-screenshots-123');
 * const { key } = await store.put({ tenantId, jobId }, screenshotName(13, 'place-order', 'after-write'), jpeg);
 */
export function createS3ScreenshotStore(
  client: S3Client | (() => S3Client),
  bucket: string,
): ScreenshotStore {
  // A function builds the client (and loads the SDK) at the first screenshot, not with the store.
  let built: S3Client | undefined;
  const s3 = (): S3Client => {
    built ??= typeof client === 'function' ? client() : client;
    return built;
  };
  return {
    enabled: true,
    async put(ref, name, body) {
      if (!NAME.test(name)) throw new TypeError(`not a screenshot name: ${JSON.stringify(name)}`);
      const key = screenshotPrefix(ref.tenantId, ref.jobId) + name;
      const sha256 = createHash('sha256').update(body).digest('hex');
      const { PutObjectCommand } = s3Sdk();
      await s3().send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentType: 'image/jpeg',
          Metadata: { sha256 },
        }),
      );
      return { key, bytes: body.byteLength, sha256 };
    },
    async get(ref, key) {
      const prefix = screenshotPrefix(ref.tenantId, ref.jobId);
      if (!key.startsWith(prefix) || !NAME.test(key.slice(prefix.length)))
        throw new ScreenshotNotFoundError();
      const { GetObjectCommand, NoSuchKey } = s3Sdk();
      try {
        const res = await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (!res.Body) throw new ScreenshotNotFoundError();
        return Buffer.from(await res.Body.transformToByteArray());
      } catch (err) {
        if (err instanceof NoSuchKey) throw new ScreenshotNotFoundError({ cause: err });
        throw err;
      }
    },
  };
}

/** No store: screenshots are off (no bucket). Capturing is skipped; a read is a bug. */
export function createNoScreenshotStore(): ScreenshotStore {
  return {
    enabled: false,
    async put() {
      throw new ScreenshotsDisabledError();
    },
    async get() {
      throw new ScreenshotNotFoundError();
    },
  };
}
