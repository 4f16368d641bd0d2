import { s3ClientFromEnv } from '../aws/s3.ts';
import { getOptionalStringFromEnv } from '../config.ts';
import { createNoScreenshotStore, createS3ScreenshotStore, type ScreenshotStore } from './store.ts';

/**
 * The screenshot store from the environment: `BELAY_SCREENSHOT_BUCKET` (S3; `S3_ENDPOINT` for
 * the local stack's S3-compatible server), or none (screenshots off) when it is not set.
 */
export function screenshotStoreFromEnv(env: NodeJS.ProcessEnv = process.env): ScreenshotStore {
  const bucket = getOptionalStringFromEnv('BELAY_SCREENSHOT_BUCKET', env);
  return bucket ? createS3ScreenshotStore(() => s3ClientFromEnv(env), bucket) : createNoScreenshotStore();
}
