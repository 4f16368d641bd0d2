/**
 * Volumes of the local Anchor service: team-owned folders that outlive sessions, as Anchor's
 * Volumes API describes them (at most {@link MAX_VOLUMES_PER_TEAM} per team, names unique in the
 * team, files under the volume root, a session's downloads in `downloads/`). One folder per
 * volume under the data dir:
 *
 * ```
 * <dataDir>/volumes/<id>/volume.json   the record (id, name, status, created_at)
 * <dataDir>/volumes/<id>/files/        the volume root; `downloads/` is where a mounted browser saves
 * ```
 *
 * The local service has one team (its one API key), so the team limit is a limit on the service.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { ApiError } from './errors.ts';
import { readJson, writeJsonAtomic } from './store.ts';

/** Anchor's limit: "Each team can have up to 10 volumes." */
export const MAX_VOLUMES_PER_TEAM = 10;

/** Anchor's rule for names: letters, numbers, `_` and `-`, unique within the team. */
export const VOLUME_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The folder a mounted browser saves its downloads into, relative to the volume root. */
export const DOWNLOADS_DIR = 'downloads';

export interface VolumeRecord {
  id: string;
  name: string;
  status: 'ready';
  created_at: string;
}

export interface VolumeFileEntry {
  /** Relative to the volume root, `/`-separated. */
  path: string;
  type: 'file' | 'directory';
  size: number;
  updated_at: string;
}

/** Longest relative path taken (a path past it is refused, not truncated). */
const MAX_PATH = 512;

/**
 * A path inside a volume, checked: relative, `/`-separated, no `.`/`..` segment, no NUL. The
 * message names what is wrong, never the path itself beyond its rule.
 */
export function volumePath(path: string): string {
  const trimmed = path.replace(/^\/+/, '');
  if (trimmed === '' || trimmed.length > MAX_PATH) throw new ApiError(400, 'path: must be 1-512 characters');
  const parts = trimmed.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0') || p.includes('\\'))) {
    throw new ApiError(400, 'path: must be a relative path with no empty, "." or ".." segment');
  }
  return parts.join('/');
}

export class VolumeStore {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, 'volumes');
  }

  async init(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  /** The folder of a volume's files (the mount's source). */
  filesDir(id: string): string {
    return join(this.root, id, 'files');
  }

  /** Where a browser with the volume mounted saves downloads. */
  downloadsDir(id: string): string {
    return join(this.filesDir(id), DOWNLOADS_DIR);
  }

  async list(): Promise<VolumeRecord[]> {
    const ids = (await readdir(this.root)).filter((n) => !n.includes('.tmp'));
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records
      .filter((r): r is VolumeRecord => r !== undefined)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async get(id: string): Promise<VolumeRecord | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
    return readJson<VolumeRecord>(join(this.root, id, 'volume.json'));
  }

  /** `POST /v1/volumes`: a 400 for a bad name, a 409 for a name in use, a 403 past the team's limit. */
  async create(name: unknown): Promise<VolumeRecord> {
    if (typeof name !== 'string' || !VOLUME_NAME.test(name)) {
      throw new ApiError(400, 'name: must be 1-64 of letters, numbers, _ and -');
    }
    const existing = await this.list();
    if (existing.some((v) => v.name === name))
      throw new ApiError(409, `A volume named ${name} already exists`);
    if (existing.length >= MAX_VOLUMES_PER_TEAM) {
      throw new ApiError(
        403,
        `Volume limit reached: a team can have at most ${MAX_VOLUMES_PER_TEAM} volumes; delete one first`,
      );
    }
    const record: VolumeRecord = {
      id: randomUUID(),
      name,
      status: 'ready',
      created_at: new Date().toISOString(),
    };
    await mkdir(this.downloadsDir(record.id), { recursive: true });
    await writeJsonAtomic(join(this.root, record.id, 'volume.json'), record);
    return record;
  }

  async delete(id: string): Promise<void> {
    await rm(join(this.root, id), { recursive: true, force: true, maxRetries: 3 });
  }

  private fileOf(id: string, path: string): string {
    const base = this.filesDir(id);
    const full = resolve(base, volumePath(path));
    // `volumePath` already refuses `..`; this keeps a symlinked data dir honest too.
    if (relative(base, full).startsWith(`..${sep}`)) throw new ApiError(400, 'path: outside the volume');
    return full;
  }

  /** `GET /v1/volumes/{id}/files`: one folder's entries, or the whole tree with `recursive`. */
  async listFiles(id: string, folder: string | undefined, recursive: boolean): Promise<VolumeFileEntry[]> {
    const base = this.filesDir(id);
    const start = folder ? this.fileOf(id, folder) : base;
    const out: VolumeFileEntry[] = [];
    const walk = async (dir: string): Promise<void> => {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const name of names.sort()) {
        // A download still being written (Chromium's `.crdownload`) is not a file of the volume yet.
        if (name.endsWith('.crdownload') || name.includes('.tmp-')) continue;
        const full = join(dir, name);
        const info = await stat(full).catch(() => undefined);
        if (!info) continue;
        const path = relative(base, full).split(sep).join('/');
        out.push({
          path,
          type: info.isDirectory() ? 'directory' : 'file',
          size: info.isDirectory() ? 0 : info.size,
          updated_at: info.mtime.toISOString(),
        });
        if (info.isDirectory() && recursive) await walk(full);
      }
    };
    await walk(start);
    return out;
  }

  /** `POST /v1/volumes/{id}/files`: write one file at `path` (atomically: temp file, rename). */
  async writeFile(id: string, path: string, bytes: Uint8Array): Promise<VolumeFileEntry> {
    const full = this.fileOf(id, path);
    await mkdir(dirname(full), { recursive: true });
    const tmp = `${full}.tmp-${randomUUID().slice(0, 8)}`;
    await writeFile(tmp, bytes);
    await rename(tmp, full);
    const info = await stat(full);
    return {
      path: volumePath(path),
      type: 'file',
      size: info.size,
      updated_at: info.mtime.toISOString(),
    };
  }

  /** The bytes of a file, or a 404. */
  async readFile(id: string, path: string): Promise<Buffer> {
    const full = this.fileOf(id, path);
    try {
      const info = await stat(full);
      if (!info.isFile()) throw new ApiError(404, 'File not found');
      return await readFile(full);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ApiError(404, 'File not found');
      throw err;
    }
  }
}
