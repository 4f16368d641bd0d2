/**
 * The local stack's S3: `s3rver` (an S3-compatible server on the filesystem) on 127.0.0.1,
 * in the stack's own process, reached by the handlers through `@aws-sdk/client-s3` as S3 is
 * in AWS (`S3_ENDPOINT`, path-style). Objects persist under the data directory, so a restart
 * keeps every job's screenshots.
 */
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

/** The part of s3rver's API this module uses (it ships no types). */
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
  allowMismatchedSignatures: boolean;
}) => S3rverServer;

export interface LocalS3 {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  stop(): Promise<void>;
}

/** The local screenshot bucket (an S3 bucket name: 3-63 lower-case characters). */
export const LOCAL_SCREENSHOT_BUCKET = 'belay-screenshots-local';

/**
 * Starts the S3-compatible server with the screenshot bucket.
 *
 * @example
 * const s3 = await startLocalS3({ directory: '.local/s3' });
 * env.S3_ENDPOINT = s3.endpoint; env.BELAY_SCREENSHOT_BUCKET = s3.bucket;
 */
export async function startLocalS3(options: { directory: string; port?: number }): Promise<LocalS3> {
  await mkdir(options.directory, { recursive: true });
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const server = new S3rver({
    port: options.port ?? 0,
    address: '127.0.0.1',
    silent: true,
    directory: options.directory,
    configureBuckets: [{ name: LOCAL_SCREENSHOT_BUCKET }],
    // The handlers sign with throwaway local credentials.
    allowMismatchedSignatures: true,
  });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket: LOCAL_SCREENSHOT_BUCKET,
    stop: () => server.close(),
  };
}
