import type { S3Client } from '@aws-sdk/client-s3';
import { clientConfigFromEnv } from './endpoint.ts';
import { s3Sdk } from './sdk/client-s3.ts';

/**
 * The process's S3 client (screenshots); `S3_ENDPOINT` points it at the local stack's
 * S3-compatible server, which needs path-style addresses (`<endpoint>/<bucket>/<key>`) and is
 * sent checksums only where S3 requires them.
 */
export function s3ClientFromEnv(env: NodeJS.ProcessEnv = process.env): S3Client {
  const { S3Client } = s3Sdk();
  const config = clientConfigFromEnv('S3_ENDPOINT', env);
  if (!config.endpoint) return new S3Client({});
  return new S3Client({
    ...config,
    // The local server (s3rver) accepts only its own fixed, throwaway credentials.
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
