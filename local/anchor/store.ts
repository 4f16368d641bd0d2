/**
 * On-disk state of the local Anchor service, under one data dir:
 *
 * ```
 * <dataDir>/api-key                 generated key (when none is given)
 * <dataDir>/sessions/<id>.json      one record per session (live and ended)
 * <dataDir>/browsers/<id>/          the session's Chromium user-data-dir (removed when it ends)
 * <dataDir>/logs/<id>.log           Chromium's stderr
 * <dataDir>/profiles/<name>/profile.json + data/   a named, persisted profile
 * ```
 *
 * Writes are atomic (temp file + rename) so a killed service never leaves half a record.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { RecordCorruptError } from './errors.ts';

export type SessionStatus = 'running' | 'completed' | 'failed';

export type EndReason =
  | 'deleted'
  | 'idle_timeout'
  | 'max_duration'
  | 'browser_exited'
  | 'browser_killed'
  | 'dead_on_restart';

/** Everything the service knows about a session; also what `GET /_local/sessions/{id}` returns. */
export interface SessionRecord {
  id: string;
  status: SessionStatus;
  createdAt: string;
  endedAt?: string;
  endReason?: EndReason;
  idleTimeoutMinutes: number;
  maxDurationMinutes: number;
  profile?: { name: string; persist: boolean };
  /** Save the session into this profile when it ends (`POST /v1/profiles` with `session_id`). */
  saveToProfile?: string;
  identities: { id?: string }[];
  /** Volumes mounted, by id; a read-write one is where the browser saves downloads. */
  volumes?: { id: string; readOnly: boolean }[];
  tags: unknown;
  /** The create body as received. */
  configuration: unknown;
  browser: { pid: number; port: number; wsEndpoint: string; userDataDir: string };
}

export interface ProfileRecord {
  name: string;
  description?: string;
  created_at: string;
  updated_at?: string;
  source?: 'session';
  session_id?: string;
  /** `ready`, or `pending` until the source session ends and its state is saved. */
  status: 'ready' | 'pending';
}

/** Directories Chromium rebuilds by itself: not worth copying between sessions and profiles. */
const SKIPPED = new Set([
  'SingletonLock',
  'SingletonSocket',
  'SingletonCookie',
  'DevToolsActivePort',
  'Cache',
  'Code Cache',
  'GPUCache',
  'GrShaderCache',
  'GraphiteDawnCache',
  'ShaderCache',
  'DawnGraphiteCache',
  'DawnWebGPUCache',
  'Crashpad',
  'component_crx_cache',
]);

/** Write JSON so a killed process never leaves half a file (temp file + rename, mode 0600). */
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

/** Read a JSON record; `undefined` when the file does not exist. */
export async function readJson<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new RecordCorruptError(`cannot parse ${file}`, { file }, { cause: err });
  }
}

/** Paths and records under one data dir. */
export class Store {
  readonly dataDir: string;
  constructor(dataDir: string) {
    this.dataDir = dataDir;
  }

  async init(): Promise<void> {
    for (const dir of ['sessions', 'browsers', 'logs', 'profiles']) {
      await mkdir(join(this.dataDir, dir), { recursive: true });
    }
  }

  browserDir(id: string): string {
    return join(this.dataDir, 'browsers', id);
  }

  logFile(id: string): string {
    return join(this.dataDir, 'logs', `${id}.log`);
  }

  async apiKey(): Promise<string> {
    const file = join(this.dataDir, 'api-key');
    const existing = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (existing) return existing;
    const key = `sk-local-${randomBytes(24).toString('hex')}`;
    await writeFile(file, `${key}\n`, { mode: 0o600 });
    return key;
  }

  async saveSession(record: SessionRecord): Promise<void> {
    await writeJsonAtomic(join(this.dataDir, 'sessions', `${record.id}.json`), record);
  }

  async listSessions(): Promise<SessionRecord[]> {
    const dir = join(this.dataDir, 'sessions');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json'));
    const records = await Promise.all(files.map((f) => readJson<SessionRecord>(join(dir, f))));
    return records.filter((r): r is SessionRecord => r !== undefined);
  }

  async removeBrowserDir(id: string): Promise<void> {
    await rm(this.browserDir(id), { recursive: true, force: true, maxRetries: 3 });
  }

  private profileDir(name: string): string {
    return join(this.dataDir, 'profiles', name);
  }

  async getProfile(name: string): Promise<ProfileRecord | undefined> {
    return readJson<ProfileRecord>(join(this.profileDir(name), 'profile.json'));
  }

  async listProfiles(): Promise<ProfileRecord[]> {
    const names = await readdir(join(this.dataDir, 'profiles'));
    const records = await Promise.all(
      names.filter((n) => !n.includes('.tmp-')).map((n) => this.getProfile(n)),
    );
    return records.filter((r): r is ProfileRecord => r !== undefined);
  }

  async saveProfile(record: ProfileRecord): Promise<void> {
    await mkdir(join(this.profileDir(record.name), 'data'), { recursive: true });
    await writeJsonAtomic(join(this.profileDir(record.name), 'profile.json'), record);
  }

  async deleteProfile(name: string): Promise<void> {
    await rm(this.profileDir(name), { recursive: true, force: true, maxRetries: 3 });
  }

  /** Seed a session's user-data-dir from a profile. */
  async copyProfileInto(name: string, userDataDir: string): Promise<void> {
    await copyUserData(join(this.profileDir(name), 'data'), userDataDir);
  }

  /** Replace a profile's data with a (closed) browser's user-data-dir, atomically. */
  async saveProfileData(name: string, userDataDir: string): Promise<void> {
    const dir = this.profileDir(name);
    await mkdir(dir, { recursive: true });
    const staging = join(dir, `data.tmp-${randomBytes(4).toString('hex')}`);
    await copyUserData(userDataDir, staging);
    const old = join(dir, `old.tmp-${randomBytes(4).toString('hex')}`);
    await rename(join(dir, 'data'), old).catch(() => undefined);
    await rename(staging, join(dir, 'data'));
    await rm(old, { recursive: true, force: true });
  }
}

async function copyUserData(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  await cp(from, to, {
    recursive: true,
    force: true,
    errorOnExist: false,
    filter: (src) => !SKIPPED.has(basename(src)),
  });
}
