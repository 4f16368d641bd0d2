/**
 * The local stack as a CHILD process of the chaos driver (`node --import tsx local/main.ts`),
 * so the driver can SIGKILL the whole stack and start it again on the same data directory
 * and the same ports. Every process a boot starts is tracked, and {@link ChaosStack.stop}
 * checks that none is left.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type SiteAdmin, siteAdmin } from '../../demo/sites/admin-client.ts';
import { CONTROL_TOKEN_FILE } from '../../local/control.ts';
import { allProcesses, descendants, readProcess } from '../../local/processes.ts';
import { type BelayApi, belayApi, type ControlClient, controlClient } from './clients.ts';
import type { SiteName } from './sites.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Loopback ports kept across restarts. */
export interface StackPorts {
  api: number;
  control: number;
  anchor: number;
  shop: number;
  crm: number;
  billing: number;
}

/** What the driver uses of a running boot. */
export interface StackHandle {
  pid: number;
  bootId: string;
  api: BelayApi;
  control: ControlClient;
  /** The base URL of each target application (the demo sites and the configured ones). */
  applications: Record<SiteName, string>;
  /** The admin client of each target application's site, by application name. */
  sites: Record<SiteName, SiteAdmin>;
  /** The applications served by the stack's own demo site of that name (`<dataDir>/sites/<name>.json` holds its data). */
  demoApps: ReadonlySet<SiteName>;
  /** The admin client of an application's site. @throws UnknownSiteError for an application the stack does not know */
  site(name: SiteName): SiteAdmin;
}

/** A job names an application the stack has no base URL for. */
export class UnknownSiteError extends Error {
  constructor(name: string, known: readonly string[]) {
    super(`the stack knows no application ${name} (it knows ${known.join(', ')})`);
    this.name = 'UnknownSiteError';
  }
}

/**
 * The admin token of a site: the stack's own (`<dataDir>/sites-admin-token`) for the demo sites
 * it starts, `BELAY_SITES_ADMIN_TOKEN` for a site started apart (`npm run local:sites` reads
 * the same variable), else the stack's.
 */
export function adminTokenFor(
  baseUrl: string,
  demoSites: readonly string[],
  stackToken: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const origin = (u: string): string => new URL(u).origin;
  if (demoSites.some((d) => origin(d) === origin(baseUrl))) return stackToken;
  return env.BELAY_SITES_ADMIN_TOKEN || stackToken;
}

/** The stack process did not come up (or exited while starting). */
export class StackStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StackStartError';
  }
}

/** A process still alive after the run ended. */
export interface Leftover {
  pid: number;
  cmdline: string;
}

/** Runs, kills and restarts the stack process; tracks everything it starts. */
export class ChaosStack {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** PID -> its start time (guards against PID reuse: only these very processes are ever signalled). */
  private readonly tracked = new Map<number, string>();
  /** Current boot, while it is up. */
  handle: StackHandle | undefined;
  boots = 0;

  /**
   * @param args more `npm start` options, given to every boot (`--playbooks <dir>`, `--applications <json>`)
   */
  constructor(
    readonly dataDir: string,
    readonly ports: StackPorts,
    private readonly args: readonly string[] = [],
    private readonly startTimeoutMs = 240_000,
  ) {}

  /** Starts a boot and waits until its API and control channel answer. */
  async start(): Promise<StackHandle> {
    rmSync(join(this.dataDir, CONTROL_TOKEN_FILE), { force: true });
    const log = openSync(join(this.dataDir, 'stack.log'), 'a');
    const p = this.ports;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'local/main.ts',
        '--data-dir',
        this.dataDir,
        '--port',
        String(p.api),
        '--control-port',
        String(p.control),
        '--ports',
        `anchor=${p.anchor},shop=${p.shop},crm=${p.crm},billing=${p.billing}`,
        '--end-sessions',
        ...this.args,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', log, log], env: { ...process.env, LOG_LEVEL: 'error' } },
    );
    this.child = child;
    this.boots++;
    if (child.pid !== undefined) this.track(child.pid);
    let gone = false;
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        gone = true;
        resolve();
      });
    });
    const deadline = Date.now() + this.startTimeoutMs;
    while (Date.now() < deadline) {
      if (gone) throw new StackStartError(`the stack exited while starting:\n${this.logTail()}`);
      const handle = await this.tryConnect(child.pid ?? 0);
      if (handle) {
        this.handle = handle;
        return handle;
      }
      await sleep(500);
    }
    child.kill('SIGKILL');
    throw new StackStartError(
      `the stack did not answer within ${this.startTimeoutMs / 1000} s:\n${this.logTail()}`,
    );
  }

  /** SIGKILLs the stack process (only it: its children find out as they would after a crash). */
  async crash(): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    for (const d of descendants(pid)) this.track(d);
    this.handle = undefined;
    this.child?.kill('SIGKILL');
    await this.exited;
  }

  /** Stops the boot gracefully (its browser sessions end), then SIGKILLs what is left. */
  async stop(): Promise<Leftover[]> {
    const pid = this.child?.pid;
    if (pid !== undefined && this.child?.exitCode === null && this.child.signalCode === null) {
      for (const d of descendants(pid)) this.track(d);
      this.child.kill('SIGTERM');
      const give = new AbortController();
      const done = await Promise.race([
        this.exited.then(() => true),
        sleep(90_000, false, { signal: give.signal }).catch(() => false),
      ]);
      give.abort(); // the timer must not keep the process alive once the stack has exited
      if (!done) this.child.kill('SIGKILL');
      await this.exited;
    }
    this.handle = undefined;
    const deadline = Date.now() + 15_000;
    let left = this.leftovers();
    while (left.length > 0 && Date.now() < deadline) {
      await sleep(300);
      left = this.leftovers();
    }
    for (const l of left) {
      try {
        process.kill(l.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    return left;
  }

  /** Live processes of this run: tracked PIDs, and anything naming the data directory (Chromium, DynamoDB Local). */
  leftovers(): Leftover[] {
    const found: Leftover[] = [];
    const ancestors = new Set<number>();
    for (let p: number | undefined = process.pid; p && !ancestors.has(p); p = readProcess(p)?.ppid)
      ancestors.add(p);
    for (const info of allProcesses()) {
      const { pid } = info;
      if (pid === process.pid || info.state === 'Z' || ancestors.has(pid)) continue;
      // Tracked (same start time: not a reused PID), or a browser or DynamoDB Local whose
      // files are under the data directory (their command lines name a path inside it).
      const ours = this.tracked.has(pid) && this.tracked.get(pid) === info.started;
      if (ours || info.cmdline.includes(`${this.dataDir}/`)) found.push({ pid, cmdline: info.cmdline });
    }
    return found;
  }

  private track(pid: number): void {
    const info = readProcess(pid);
    if (info) this.tracked.set(pid, info.started);
  }

  private async tryConnect(pid: number): Promise<StackHandle | undefined> {
    const read = (f: string): string | undefined => {
      try {
        return readFileSync(join(this.dataDir, f), 'utf8').trim();
      } catch {
        return undefined;
      }
    };
    const token = read(CONTROL_TOKEN_FILE);
    const apiKey = read('demo-api-key');
    const adminToken = read('sites-admin-token');
    if (!token || !apiKey || !adminToken) return undefined;
    const control = controlClient(`http://127.0.0.1:${this.ports.control}`, token);
    try {
      const health = await control.health();
      if (health.pid !== pid || !health.apiUrl) return undefined;
      for (const d of descendants(pid)) this.track(d);
      const demo = Object.values(health.sites);
      const sites: Record<SiteName, SiteAdmin> = Object.fromEntries(
        Object.entries(health.applications).map(([name, url]) => [
          name,
          siteAdmin(url, adminTokenFor(url, demo, adminToken)),
        ]),
      );
      const origin = (u: string): string => new URL(u).origin;
      const demoSites = health.sites as Record<string, string | undefined>;
      const demoApps = new Set(
        Object.entries(health.applications)
          .filter(([name, url]) => demoSites[name] !== undefined && origin(demoSites[name]) === origin(url))
          .map(([name]) => name),
      );
      return {
        pid,
        bootId: health.bootId,
        api: belayApi(health.apiUrl, apiKey),
        control,
        applications: health.applications,
        sites,
        demoApps,
        site(name) {
          const admin = sites[name];
          if (!admin) throw new UnknownSiteError(name, Object.keys(sites));
          return admin;
        },
      };
    } catch {
      return undefined;
    }
  }

  private logTail(): string {
    try {
      return readFileSync(join(this.dataDir, 'stack.log'), 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      return '(no stack.log)';
    }
  }
}
