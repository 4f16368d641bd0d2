import { ScreenshotNotFoundError } from '../../evidence/errors.ts';
import { screenshotPrefix } from '../../evidence/store.ts';
import type { LedgerEntry, ScreenshotRef } from '../../ledger/types.ts';
import type { ApiDeps } from '../deps.ts';
import { NotFoundError } from '../errors.ts';

/**
 * A job's screenshots, served only through the API: the job is read for the caller's tenant
 * (another tenant's job is a 404 like a missing one), the name must be one the job's own
 * ledger recorded, and the store checks the key is under that tenant's and job's prefix.
 */

/** The screenshot's name: the last part of its key, what its URL carries. */
export function screenshotNameOf(ref: Pick<ScreenshotRef, 'key'>): string {
  return ref.key.slice(ref.key.lastIndexOf('/') + 1);
}

/** Where the API serves an entry's screenshot (relative to the API's base URL). */
export function screenshotPath(jobId: string, ref: Pick<ScreenshotRef, 'key'>): string {
  return `/jobs/${encodeURIComponent(jobId)}/screenshots/${encodeURIComponent(screenshotNameOf(ref))}`;
}

/** The recorded screenshot of this name among a job's entries, if any. */
export function findScreenshot(entries: readonly LedgerEntry[], name: string): ScreenshotRef | undefined {
  return entries.find((e) => e.screenshot !== undefined && screenshotNameOf(e.screenshot) === name)
    ?.screenshot;
}

/** The JPEG and its record, for the caller's tenant; a 404 when the job or the screenshot is not theirs. */
export async function readScreenshot(
  deps: ApiDeps,
  tenantId: string,
  jobId: string,
  name: string,
): Promise<{ ref: ScreenshotRef; body: Buffer }> {
  const { entries } = await deps.engine.ledger.readJob(tenantId, jobId);
  const ref = findScreenshot(entries, name);
  if (!ref?.key.startsWith(screenshotPrefix(tenantId, jobId))) {
    throw new NotFoundError(`job ${jobId} has no screenshot ${name}`);
  }
  try {
    return { ref, body: await deps.engine.screenshots.get({ tenantId, jobId }, ref.key) };
  } catch (err) {
    if (err instanceof ScreenshotNotFoundError) {
      throw new NotFoundError(`screenshot ${name} of job ${jobId} is no longer kept`, { cause: err });
    }
    throw err;
  }
}

/** Headers of a served screenshot: private, cacheable by the browser for a while (its key never changes). */
export function screenshotHeaders(ref: ScreenshotRef): Record<string, string> {
  return {
    'Cache-Control': 'private, max-age=3600',
    ETag: `"${ref.sha256}"`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'",
  };
}
