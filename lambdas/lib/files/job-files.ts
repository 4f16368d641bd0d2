/**
 * A job's files in the team's volume, as a step sees them (`ctx.files`): a download the job's
 * browser saved (into the volume's `downloads/`, where Anchor puts every download of a session
 * that mounts it) is copied into the job's own folder and recorded as evidence; a later step,
 * in another session or application, reads it back from there, checked against that evidence.
 */
import type { VolumeApi, VolumeFile } from '../browser/volumes.ts';
import { FileChangedError, FileNotArrivedError } from './errors.ts';
import { type FileEvidence, fileEvidence, sha256Hex } from './evidence.ts';
import { jobFilePath, jobFolder, nameInJobFolder } from './paths.ts';

/** Where a mounted browser saves downloads, relative to the volume root (Anchor's). */
export const DOWNLOADS_FOLDER = 'downloads';

/** The files of one job, in its folder of the team's volume. */
export interface JobFiles {
  /** The job's folder in the volume (`tenants/<tenant>/jobs/<job>`). */
  readonly folder: string;
  /**
   * Runs `trigger` (the click that makes the browser download), waits for the new file in the
   * volume's `downloads/` named like `name` (the browser may add ` (1)`), copies it into the
   * job's folder as `name` and answers its evidence.
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
  /** Between listings of `downloads/` while a download is awaited (default 250 ms). */
  pollMs?: number;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `downloads/<stem>.<ext>` or the browser's uniquified `downloads/<stem> (n).<ext>`. */
function downloadPattern(name: string): RegExp {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  return new RegExp(`^${DOWNLOADS_FOLDER}/${escapeRegExp(stem)}( \\(\\d+\\))?${escapeRegExp(ext)}$`);
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
      const pattern = downloadPattern(name);
      // Files already there are earlier downloads (another job's, or this job's before a crash);
      // the browser may save over one of them (same name), which changes its time or size.
      const version = (f: VolumeFile): string => `${f.updatedAt ?? ''}/${f.size}`;
      const before = new Map(
        (await volumes.listFiles(id, DOWNLOADS_FOLDER))
          .filter((f) => pattern.test(f.path))
          .map((f) => [f.path, version(f)]),
      );
      await trigger();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const arrived = (await volumes.listFiles(id, DOWNLOADS_FOLDER)).find(
          (f) => pattern.test(f.path) && f.size > 0 && before.get(f.path) !== version(f),
        );
        if (arrived) {
          const bytes = await volumes.readFile(id, arrived.path);
          await volumes.writeFile(id, target, bytes);
          return fileEvidence(name, target, bytes);
        }
        if (Date.now() > deadline) {
          throw new FileNotArrivedError(
            `no new ${name} arrived in the volume's downloads within ${timeoutMs} ms`,
            {
              name,
            },
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
