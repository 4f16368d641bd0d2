/**
 * The download a step's click caused, as the browser reports it: the page's own DevTools events
 * (`Page.downloadWillBegin`, then `Page.downloadProgress` until `completed`) on a CDP session of
 * the step's page. They name the download by the browser's GUID, which is also the file's name
 * where the browser saves downloads "allowAndName" (the local service's mounts do), so the file
 * is found by what the click started, never by a name another session's download may share.
 * Only this page's frames report here: another tab's, another session's or another tenant's
 * download is never seen.
 */
import type { CDPSession, Page } from 'playwright-core';
import { DownloadFailedError } from './errors.ts';

/** One download the browser finished saving. */
export interface CapturedDownload {
  /** The browser's id of the download (its file's name under "allowAndName"). */
  guid: string;
  /** The name the site suggested (`Content-Disposition`), for the record. */
  suggestedFilename: string;
  url: string;
}

/** Runs the click that downloads, and answers the download it started once it is saved. */
export type CaptureDownload = (trigger: () => Promise<void>, timeoutMs: number) => Promise<CapturedDownload>;

interface WillBegin {
  guid: string;
  url: string;
  suggestedFilename: string;
}

interface Progress {
  guid: string;
  state: 'inProgress' | 'completed' | 'canceled';
}

/**
 * The downloads of `page`: the first one that begins after `trigger` starts is its own.
 *
 * @example
 * const saved = await pageDownloads(page)(() => page.click('#pdf'), 30_000);
 */
export function pageDownloads(page: Page): CaptureDownload {
  return async (trigger, timeoutMs) => {
    const cdp: CDPSession = await page.context().newCDPSession(page);
    try {
      let begun: WillBegin | undefined;
      const finished = new Map<string, Progress['state']>();
      let wake: () => void = () => undefined;
      const changed = (): void => wake();
      cdp.on('Page.downloadWillBegin' as never, (e: WillBegin) => {
        begun ??= e;
        changed();
      });
      cdp.on('Page.downloadProgress' as never, (e: Progress) => {
        if (e.state !== 'inProgress') finished.set(e.guid, e.state);
        changed();
      });
      await cdp.send('Page.enable');
      await trigger();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const state = begun ? finished.get(begun.guid) : undefined;
        if (begun && state === 'completed') {
          return { guid: begun.guid, suggestedFilename: begun.suggestedFilename, url: begun.url };
        }
        if (begun && state === 'canceled') {
          throw new DownloadFailedError(`the browser canceled the download of ${begun.suggestedFilename}`);
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new DownloadFailedError(
            begun
              ? `the download of ${begun.suggestedFilename} did not finish within ${timeoutMs} ms`
              : `the click started no download within ${timeoutMs} ms`,
          );
        }
        await new Promise<void>((ok) => {
          const timer = setTimeout(ok, Math.min(left, 1_000));
          wake = () => {
            clearTimeout(timer);
            ok();
          };
        });
      }
    } finally {
      await cdp.detach().catch(() => undefined);
    }
  };
}
