/**
 * Session lifecycle of the local Anchor service: one detached Chromium per session, idle and
 * max-duration timeouts, profiles saved on a graceful end, records on disk, and re-adoption of
 * live browsers after a restart of the service.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import {
  closeChromiumGracefully,
  isChromiumFor,
  isProcessAlive,
  killProcessGroup,
  launchChromium,
  probeCdp,
  waitForExit,
} from '../chromium.ts';
import { processes } from '../processes.ts';
import { ApiError, SessionStartError } from './errors.ts';
import { describeIssues, sessionCreateSchema } from './schema.ts';
import type { SessionIdentities } from './session-identities.ts';
import type { EndReason, SessionRecord, SessionStatus, Store } from './store.ts';
import { type LongTimer, longTimeout } from './timer.ts';
import type { VolumeStore } from './volumes.ts';

/** Defaults of the real API, in minutes. */
export const DEFAULT_IDLE_TIMEOUT_MINUTES = 5;
export const DEFAULT_MAX_DURATION_MINUTES = 20;

export interface SessionManagerOptions {
  store: Store;
  volumes: VolumeStore;
  /** Length of an API "minute" in ms (60 000; tests use 1 000 to count in seconds). */
  minuteMs: number;
  chromiumPath?: string;
  log: (line: string) => void;
  /** Identities a session is created with: checked before its browser starts, signed in before it is answered. */
  identities: SessionIdentities;
}

interface Live {
  record: SessionRecord;
  clients: Set<Socket>;
  idle?: LongTimer;
  max?: LongTimer;
  ending?: Promise<SessionRecord>;
}

/** Owns every session of one service instance. */
export class SessionManager {
  private readonly opts: SessionManagerOptions;
  private readonly records = new Map<string, SessionRecord>();
  private readonly live = new Map<string, Live>();
  private launches: Promise<unknown> = Promise.resolve();
  private watcher?: NodeJS.Timeout;
  private stopped = false;
  /** Every browser PID this instance launched or adopted (for tests that check they are gone). */
  readonly browserPids = new Set<number>();

  constructor(opts: SessionManagerOptions) {
    this.opts = opts;
  }

  /** Read the records; adopt sessions whose browser still answers, mark the others ended. */
  async load(): Promise<void> {
    for (const record of await this.opts.store.listSessions()) {
      this.records.set(record.id, record);
      if (record.status !== 'running') continue;
      const { pid, port, wsEndpoint, userDataDir } = record.browser;
      const alive = isChromiumFor(pid, userDataDir) && (await probeCdp(port)) === wsEndpoint;
      if (alive) {
        this.browserPids.add(pid);
        this.track(record);
        this.opts.log(`adopted session ${record.id} (chromium pid ${pid})`);
      } else {
        if (isChromiumFor(pid, userDataDir)) killProcessGroup(pid);
        await this.finish(record, 'failed', 'dead_on_restart');
      }
    }
    this.killOrphans();
    this.watcher = setInterval(() => this.checkBrowsers(), 1_000);
    this.watcher.unref();
  }

  /**
   * Chromiums under this store that no session owns: a previous instance died while launching
   * one (the browser was up, its record not yet written). Nothing would ever end them, so they
   * end here, with their process group.
   */
  private killOrphans(): void {
    const root = dirname(this.opts.store.browserDir('x'));
    for (const p of processes()) {
      if (p.cmdline.includes('--type=')) continue; // a Chromium's helper process: goes with its main one
      const dir = /--user-data-dir=(\S+)/.exec(p.cmdline)?.[1];
      if (!dir || dirname(dir) !== root) continue;
      const id = basename(dir);
      if (this.live.has(id)) continue;
      killProcessGroup(p.pid);
      this.opts.log(`ended an orphaned chromium (pid ${p.pid}) of a session never recorded: ${id}`);
    }
  }

  /**
   * Where session `sessionId`'s browser, with volume `volumeId` mounted read-write, saves downloads
   * (the CDP proxy sets it): a folder of the session's own under the volume's `downloads/`.
   */
  downloadsDir(volumeId: string, sessionId: string): string {
    return join(this.opts.volumes.downloadsDir(volumeId), sessionId);
  }

  get(id: string): SessionRecord | undefined {
    return this.records.get(id);
  }

  list(): SessionRecord[] {
    return [...this.records.values()];
  }

  running(): SessionRecord[] {
    return [...this.live.values()].map((l) => l.record);
  }

  /** `POST /v1/sessions`: validate, start Chromium (one launch at a time), record. */
  async create(body: unknown): Promise<SessionRecord> {
    const parsed = sessionCreateSchema.safeParse(body ?? {});
    if (!parsed.success) throw new ApiError(400, describeIssues(parsed.error));
    const { browser, session, identities } = parsed.data;
    const mounts = (parsed.data.volumes ?? []).map((v) => ({ id: v.id, readOnly: v.read_only ?? false }));
    for (const [i, mount] of mounts.entries()) {
      if (!(await this.opts.volumes.get(mount.id)))
        throw new ApiError(404, `volumes.${i}.id: volume not found`);
    }
    if (new Set(mounts.map((m) => m.id)).size !== mounts.length)
      throw new ApiError(400, 'volumes: a volume is mounted at most once per session');
    const profile = browser?.profile;
    if (profile && !profile.name)
      throw new ApiError(400, 'browser.profile.name: required with browser.profile');
    const profileRef = profile?.name ? { name: profile.name, persist: profile.persist ?? false } : undefined;
    if (profileRef && !profileRef.persist && !(await this.opts.store.getProfile(profileRef.name))) {
      throw new ApiError(404, `Profile ${profileRef.name} not found`);
    }
    const identityIds = (identities ?? []).flatMap((i) => (i.id ? [i.id] : []));
    await this.opts.identities.check(identityIds);
    const id = randomUUID();
    const userDataDir = this.opts.store.browserDir(id);
    const started = this.launches.then(async () => {
      if (profileRef && (await this.opts.store.getProfile(profileRef.name))) {
        await this.opts.store.copyProfileInto(profileRef.name, userDataDir);
      }
      const viewport = browser?.viewport;
      return launchChromium({
        userDataDir,
        executablePath: this.opts.chromiumPath,
        startUrl: session?.initial_url,
        logFile: this.opts.store.logFile(id),
        extraArgs:
          viewport?.width && viewport.height ? [`--window-size=${viewport.width},${viewport.height}`] : [],
      });
    });
    this.launches = started.catch(() => undefined);
    let launched: Awaited<typeof started>;
    try {
      launched = await started;
    } catch (err) {
      await this.opts.store.removeBrowserDir(id);
      this.opts.log(`session ${id}: ${(err as Error).message}`);
      throw new ApiError(500, 'Failed to start browser session', {
        cause: new SessionStartError((err as Error).message, { sessionId: id }, { cause: err }),
      });
    }
    const record: SessionRecord = {
      id,
      status: 'running',
      createdAt: new Date().toISOString(),
      idleTimeoutMinutes: session?.timeout?.idle_timeout ?? DEFAULT_IDLE_TIMEOUT_MINUTES,
      maxDurationMinutes: session?.timeout?.max_duration ?? DEFAULT_MAX_DURATION_MINUTES,
      ...(profileRef ? { profile: profileRef } : {}),
      identities: identities ?? [],
      ...(mounts.length > 0 ? { volumes: mounts } : {}),
      tags: session?.tags ?? {},
      configuration: parsed.data,
      browser: { pid: launched.pid, port: launched.port, wsEndpoint: launched.wsEndpoint, userDataDir },
    };
    this.browserPids.add(launched.pid);
    await this.opts.store.saveSession(record);
    this.records.set(id, record);
    // Stopped meanwhile: the record is on disk, so the next instance adopts the browser.
    if (this.stopped) return record;
    this.track(record);
    launched.child.once('exit', () => {
      if (!this.stopped && this.live.get(id)?.ending === undefined && this.live.has(id)) {
        void this.end(id, 'browser_exited', 'failed');
      }
    });
    // As Anchor: the session is handed over once its identities' logins have run.
    try {
      await this.opts.identities.signIn(launched.wsEndpoint, identityIds);
    } catch (err) {
      await this.end(id, 'browser_exited', 'failed').catch(() => undefined);
      this.opts.log(`session ${id}: identity sign-in: ${(err as Error).message}`);
      throw new ApiError(500, 'Failed to authenticate the session');
    }
    return record;
  }

  /** Ask for the session to be saved into a profile when it ends (`POST /v1/profiles` with a session). */
  async saveOnEnd(id: string, profileName: string): Promise<void> {
    const live = this.live.get(id);
    if (!live) throw new ApiError(404, `Session ${id} not found or not running`);
    live.record.saveToProfile = profileName;
    await this.opts.store.saveSession(live.record);
  }

  /** A CDP client connected through the proxy; false when the session is not running. */
  addClient(id: string, socket: Socket): boolean {
    const live = this.live.get(id);
    if (!live || live.ending || !isProcessAlive(live.record.browser.pid)) return false;
    live.clients.add(socket);
    live.idle?.cancel();
    live.idle = undefined;
    socket.once('close', () => {
      live.clients.delete(socket);
      if (live.clients.size === 0 && !live.ending && !this.stopped) this.armIdle(live);
    });
    return true;
  }

  /**
   * End a session: save its profile (graceful `Browser.close` first) when asked, else kill
   * its browser; remove its user-data-dir; record why. Idempotent; resolves with the record.
   */
  async end(id: string, reason: EndReason, status: SessionStatus = 'completed'): Promise<SessionRecord> {
    const live = this.live.get(id);
    if (!live) {
      const record = this.records.get(id);
      if (!record) throw new ApiError(404, 'Session not found');
      return record;
    }
    live.ending ??= (async () => {
      live.idle?.cancel();
      live.max?.cancel();
      const { record } = live;
      const saveTo = record.profile?.persist ? record.profile.name : record.saveToProfile;
      const crashed = reason === 'browser_exited' || reason === 'browser_killed';
      if (saveTo && !crashed) {
        const outcome = await closeChromiumGracefully(record.browser, 10_000);
        if (outcome === 'graceful') await this.saveProfile(saveTo, record);
        else this.opts.log(`session ${id}: browser did not close gracefully (${outcome}); profile not saved`);
      } else {
        killProcessGroup(record.browser.pid);
        await waitForExit(record.browser.pid, 5_000);
      }
      for (const socket of live.clients) socket.destroy();
      return this.finish(record, status, reason);
    })();
    return live.ending;
  }

  /** `DELETE /v1/sessions/all`. */
  async endAll(reason: EndReason): Promise<number> {
    const ids = [...this.live.keys()];
    await Promise.all(ids.map((id) => this.end(id, reason)));
    return ids.length;
  }

  /** Fault injection: SIGKILL the session's browser, as if it crashed. Resolves with its PID. */
  async killBrowser(id: string): Promise<number> {
    const live = this.live.get(id);
    if (!live) throw new ApiError(404, `Session ${id} not found or not running`);
    const { pid } = live.record.browser;
    killProcessGroup(pid, 'SIGKILL');
    await this.end(id, 'browser_killed', 'failed');
    return pid;
  }

  /** Stop timers and drop client connections; browsers live on unless `endSessions`. */
  async stop(endSessions: boolean): Promise<void> {
    if (endSessions) await this.endAll('deleted');
    this.stopped = true;
    if (this.watcher) clearInterval(this.watcher);
    for (const live of this.live.values()) {
      live.idle?.cancel();
      live.max?.cancel();
      for (const socket of live.clients) socket.destroy();
    }
    await Promise.all([...this.live.values()].map((l) => l.ending?.catch(() => undefined)));
    this.live.clear();
  }

  private track(record: SessionRecord): void {
    const live: Live = { record, clients: new Set() };
    this.live.set(record.id, live);
    const age = Date.now() - Date.parse(record.createdAt);
    live.max = longTimeout(
      () => void this.end(record.id, 'max_duration').catch((err) => this.warn(record.id, err)),
      record.maxDurationMinutes * this.opts.minuteMs - age,
    );
    this.armIdle(live);
  }

  private armIdle(live: Live): void {
    live.idle?.cancel();
    const { id, idleTimeoutMinutes } = live.record;
    live.idle = longTimeout(
      () => void this.end(id, 'idle_timeout').catch((err) => this.warn(id, err)),
      idleTimeoutMinutes * this.opts.minuteMs,
    );
  }

  private checkBrowsers(): void {
    for (const [id, live] of this.live) {
      if (!live.ending && !isChromiumFor(live.record.browser.pid, live.record.browser.userDataDir)) {
        void this.end(id, 'browser_exited', 'failed').catch((err) => this.warn(id, err));
      }
    }
  }

  private async saveProfile(name: string, record: SessionRecord): Promise<void> {
    const now = new Date().toISOString();
    const existing = await this.opts.store.getProfile(name);
    await this.opts.store.saveProfileData(name, record.browser.userDataDir);
    await this.opts.store.saveProfile({
      ...(existing ?? { name, created_at: now, source: 'session' as const }),
      session_id: record.id,
      updated_at: now,
      status: 'ready',
    });
  }

  private async finish(
    record: SessionRecord,
    status: SessionStatus,
    reason: EndReason,
  ): Promise<SessionRecord> {
    const ended: SessionRecord = { ...record, status, endReason: reason, endedAt: new Date().toISOString() };
    this.live.delete(record.id);
    this.records.set(record.id, ended);
    await this.opts.store.removeBrowserDir(record.id);
    await this.opts.store.saveSession(ended);
    this.opts.log(`session ${record.id} ${status} (${reason})`);
    return ended;
  }

  private warn(id: string, err: unknown): void {
    this.opts.log(`session ${id}: ${(err as Error).message}`);
  }
}
