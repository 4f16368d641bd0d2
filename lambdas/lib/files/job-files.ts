/**
 * A job's files in the team's volume, as a step sees them (`ctx.files`): the download the step's
 * click caused (known by the browser's id for it, from the step's own page, and saved by its
 * session into the session's own folder `downloads/<session>/<download id>`) is copied into the
 * job's own folder and recorded as evidence; a later step, in another session or application,
 * reads it back from there, checked against that evidence. No name is matched: two tenants'
 * jobs downloading `invoice.pdf` at the same moment each get the bytes their own click fetched.
 */
import type { CaptureDownload } from '../browser/downloads.ts';
import { DownloadFailedError } from '../browser/errors.ts';
import type { VolumeApi } from '../browser/volumes.ts';
import { FileChangedError, FileNotArrivedError, FilePathError } from './errors.ts';
import { type FileEvidence, fileEvidence, sha256Hex } from './evidence.ts';
import { jobFilePath, jobFolder, nameInJobFolder } from './paths.ts';

/** Where a mounted browser saves downloads, relative to the volume root (Anchor's). */
export const DOWNLOADS_FOLDER = 'downloads';

/** A session id or a browser's download id: one path segment. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * Where a session's download lands in the volume: the session's own folder under `downloads/`,
 * named by the browser's id for the download (the local service's mounts save "allowAndName").
 */
export function sessionDownloadPath(sessionId: string, guid: string): string {
  if (!SEGMENT.test(sessionId) || !SEGMENT.test(guid)) {
    throw new DownloadFailedError('the session or download id is not one plain path segment');
  }
  return `${DOWNLOADS_FOLDER}/${sessionId}/${guid}`;
}

/** The browser side of `download`: the step's session and its page's downloads. */
export interface StepDownloads {
  /** The session whose browser runs the step (its downloads land in `downloads/<sessionId>/`). */
  sessionId: string;
  capture: CaptureDownload;
}

/** Where no step's page is attached (probes, sign-ins, a process with no browser): downloads are refused. */
export const NO_DOWNLOADS: StepDownloads = {
  sessionId: '',
  capture: async () => {
    throw new FilePathError('ctx.files.download runs only in a step of RunStep, on its page', {
      tenantId: '',
      jobId: '',
    });
  },
};

/** The files of one job, in its folder of the team's volume. */
export interface JobFiles {
  /** The job's folder in the volume (`tenants/<tenant>/jobs/<job>`). */
  readonly folder: string;
  /**
   * Runs `trigger` (the click that makes the browser download), takes the download that click
   * started in the step's page once the browser has saved it, waits for it in the session's
   * folder of the volume, copies it into the job's folder as `name` and answers its evidence.
   * @example
   * const file = await ctx.files.download('invoice-INV-2041.pdf', () => page.click('#pdf'));
   */
  download(
    name: string,
    trigger: () => Promise<void>,
    options?: { timeoutMs?: number },
  ): Promise<FileEvidence>;
  /** The evidence of the job's file `name`, or undefined when the job's folder has none. */
  find(name: string): Promise<FileEvidence | undefined>;
  /**
   * The bytes of the file `evidence` describes, checked: in this job's folder, and still the
   * bytes it recorded (else {@link FileChangedError}).
   */
  read(evidence: { path: string; sha256: string }): Promise<Uint8Array>;
}

export interface JobFilesOptions {
  volumes: VolumeApi;
  /** The team volume Belay keeps jobs' files in (`BELAY_FILES_VOLUME`). */
  volumeName: string;
  tenantId: string;
  jobId: string;
  /** The step's session and page ({@link NO_DOWNLOADS} where there is none). */
  downloads: StepDownloads;
  /** Between looks for the saved file in the volume (default 250 ms). */
  pollMs?: number;
}

export function createJobFiles(options: JobFilesOptions): JobFiles {
  const { volumes, volumeName, tenantId, jobId } = options;
  const pollMs = options.pollMs ?? 250;
  const folder = jobFolder(tenantId, jobId);
  const volumeId = (): Promise<string> => volumes.ensure(volumeName);

  return {
    folder,

    async download(name, trigger, { timeoutMs = 30_000 } = {}): Promise<FileEvidence> {
      const target = jobFilePath(tenantId, jobId, name);
      const id = await volumeId();
      const deadline = Date.now() + timeoutMs;
      let saved: Awaited<ReturnType<CaptureDownload>>;
      try {
        saved = await options.downloads.capture(trigger, timeoutMs);
      } catch (err) {
        if (!(err instanceof DownloadFailedError)) throw err;
        throw new FileNotArrivedError(`${name}: ${err.message}`, { name }, { cause: err });
      }
      const path = sessionDownloadPath(options.downloads.sessionId, saved.guid);
      const folder = path.slice(0, path.lastIndexOf('/'));
      // Saved by the browser; the volume may show it a moment later.
      for (;;) {
        const listed = (await volumes.listFiles(id, folder)).find((f) => f.path === path && f.size > 0);
        if (listed) {
          const bytes = await volumes.readFile(id, path);
          await volumes.writeFile(id, target, bytes);
          return fileEvidence(name, target, bytes);
        }
        if (Date.now() > deadline) {
          throw new FileNotArrivedError(
            `the download of ${name} was saved by the browser but did not appear in the volume within ${timeoutMs} ms`,
            { name },
          );
        }
        await new Promise((ok) => setTimeout(ok, pollMs));
      }
    },

    async find(name): Promise<FileEvidence | undefined> {
      const target = jobFilePath(tenantId, jobId, name);
      const id = await volumeId();
      const listed = (await volumes.listFiles(id, folder)).find((f) => f.path === target);
      if (!listed) return undefined;
      return fileEvidence(name, target, await volumes.readFile(id, target));
    },

    async read(evidence): Promise<Uint8Array> {
      nameInJobFolder(tenantId, jobId, evidence.path);
      const bytes = await volumes.readFile(await volumeId(), evidence.path);
      if (sha256Hex(bytes) !== evidence.sha256) {
        throw new FileChangedError(`the job's file no longer has the bytes its evidence recorded`, {
          path: evidence.path,
        });
      }
      return bytes;
    },
  };
}
