/**
 * Launch and stop Debian's Chromium for the local stack: detached (so a browser outlives the
 * process that started it), CDP on loopback, quiet offline. Reusable by any local service or test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { ChromiumLaunchError, ChromiumMissingError } from './errors.ts';

/** The real binary; `/usr/bin/chromium` is a shell wrapper whose PID is not the browser's. */
export const DEFAULT_CHROMIUM_PATH = '/usr/lib/chromium/chromium';

/** Flags that keep Chromium headless, on loopback and off the network. */
export const QUIET_CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--password-store=basic',
  '--remote-debugging-address=127.0.0.1',
  '--remote-debugging-port=0',
  // Chromium's own background services (accounts, autofill) look up Google's hosts even with
  // background networking off: every host name resolves to nothing here, loopback excepted.
  // `BELAY_BROWSER_RESOLVE_HOSTS=1` lifts it, for a site of one's own reached by name.
  ...(process.env.BELAY_BROWSER_RESOLVE_HOSTS === '1'
    ? []
    : ['--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost']),
];

/** The Chromium binary to launch: `executablePath`, else `CHROMIUM_PATH`, else {@link DEFAULT_CHROMIUM_PATH}. */
export function chromiumPath(executablePath?: string): string {
  return executablePath ?? process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
}

/**
 * Throws {@link ChromiumMissingError} (which says how to install it) when the binary is not an
 * executable file, so a service that will launch browsers refuses to start instead of failing
 * at its first session. Returns the path checked.
 */
export function assertChromium(executablePath?: string): string {
  const path = chromiumPath(executablePath);
  try {
    accessSync(path, constants.X_OK);
  } catch (err) {
    throw new ChromiumMissingError(path, { cause: err });
  }
  return path;
}

export interface LaunchChromiumOptions {
  /** Profile directory; created when missing. One browser per directory. */
  userDataDir: string;
  /** Defaults to `CHROMIUM_PATH` or {@link DEFAULT_CHROMIUM_PATH}. */
  executablePath?: string;
  /** Own process group, not killed with the parent (default true). */
  detached?: boolean;
  extraArgs?: string[];
  /** Page the browser opens with (default `about:blank`, so there is always one page). */
  startUrl?: string;
  /** Time to wait for the DevTools port (default 30 s). */
  timeoutMs?: number;
  /** Where Chromium's stdout/stderr go (default: discarded). */
  logFile?: string;
}

export interface LaunchedChromium {
  pid: number;
  port: number;
  /** `ws://127.0.0.1:<port>/devtools/browser/<id>`. */
  wsEndpoint: string;
  userDataDir: string;
  /** The spawned process (reaped by this Node process when it exits). */
  child: ChildProcess;
}

/**
 * Start Chromium and resolve once its CDP endpoint answers.
 *
 * @example
 * const browser = await launchChromium({ userDataDir: '/tmp/profile-a' });
 * // ... chromium.connectOverCDP(browser.wsEndpoint) ...
 * await closeChromiumGracefully(browser);
 */
export async function launchChromium(options: LaunchChromiumOptions): Promise<LaunchedChromium> {
  const { userDataDir } = options;
  const executablePath = chromiumPath(options.executablePath);
  const timeoutMs = options.timeoutMs ?? 30_000;
  await mkdir(userDataDir, { recursive: true });
  // A copied or reused profile may hold the previous browser's port file and locks.
  await Promise.all(
    ['DevToolsActivePort', 'SingletonLock', 'SingletonSocket', 'SingletonCookie'].map((f) =>
      rm(`${userDataDir}/${f}`, { force: true }),
    ),
  );
  const args = [
    ...QUIET_CHROMIUM_FLAGS,
    `--user-data-dir=${userDataDir}`,
    ...(options.extraArgs ?? []),
    options.startUrl ?? 'about:blank',
  ];
  const logFd = options.logFile ? openSync(options.logFile, 'a') : undefined;
  let child: ChildProcess;
  try {
    child = spawn(executablePath, args, {
      detached: options.detached ?? true,
      stdio: ['ignore', logFd ?? 'ignore', logFd ?? 'ignore'],
    });
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
  child.unref();
  let exited: string | undefined;
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  child.once('exit', (code, signal) => {
    exited = `exited with ${signal ?? code}`;
  });
  const deadline = Date.now() + timeoutMs;
  const portFile = `${userDataDir}/DevToolsActivePort`;
  while (Date.now() < deadline) {
    if (spawnError) {
      throw new ChromiumLaunchError(
        `cannot start ${executablePath}: ${spawnError.message}`,
        { userDataDir },
        {
          cause: spawnError,
        },
      );
    }
    if (exited) throw new ChromiumLaunchError(`Chromium ${exited} before opening CDP`, { userDataDir });
    const endpoint = await readDevToolsActivePort(userDataDir);
    if (endpoint && child.pid !== undefined) {
      return { pid: child.pid, port: endpoint.port, wsEndpoint: endpoint.wsEndpoint, userDataDir, child };
    }
    await sleep(20);
  }
  if (child.pid !== undefined) killProcessGroup(child.pid);
  throw new ChromiumLaunchError(`no ${portFile} after ${timeoutMs} ms`, { userDataDir });
}

/** Port and browser WebSocket URL from `DevToolsActivePort`, or null while it is not written. */
export async function readDevToolsActivePort(
  userDataDir: string,
): Promise<{ port: number; wsEndpoint: string } | null> {
  const text = await readFile(`${userDataDir}/DevToolsActivePort`, 'utf8').catch(() => '');
  const [portLine, pathLine] = text.split('\n');
  const port = Number(portLine);
  if (!Number.isInteger(port) || port <= 0 || !pathLine?.startsWith('/devtools/browser/')) return null;
  return { port, wsEndpoint: `ws://127.0.0.1:${port}${pathLine.trim()}` };
}

/** The browser WebSocket URL Chromium reports on `port`, or null when it does not answer in time. */
export async function probeCdp(port: number, timeoutMs = 2_000): Promise<string | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/json/version`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as { webSocketDebuggerUrl?: unknown };
    return typeof body.webSocketDebuggerUrl === 'string' ? body.webSocketDebuggerUrl : null;
  } catch {
    return null;
  }
}

/** True when the process exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  try {
    const text = readFileSync(stat, 'utf8');
    const state = text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The process's command line (NUL-separated arguments joined with spaces), or null. */
export function processCommandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return null;
  }
}

/** True when `pid` is a live Chromium started with this user-data-dir (guards against PID reuse). */
export function isChromiumFor(pid: number, userDataDir: string): boolean {
  if (!isProcessAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  return cmd === null || cmd.includes(`--user-data-dir=${userDataDir}`);
}

/** Signal the process group led by `pid` (a detached launch), falling back to the process alone. */
export function killProcessGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
    return;
  } catch {
    // Not a group leader (launched attached), or already gone.
  }
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Resolves true once `pid` is gone, false when it is still alive after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
  return true;
}

/** Send one CDP command on the browser endpoint; resolves when answered or the socket closes. */
export async function sendBrowserCommand(
  wsEndpoint: string,
  method: string,
  timeoutMs = 5_000,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(wsEndpoint, { handshakeTimeout: timeoutMs });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`${method}: no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (err?: Error): void => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    ws.once('open', () => ws.send(JSON.stringify({ id: 1, method })));
    ws.once('message', () => {
      ws.close();
      done();
    });
    ws.once('close', () => done());
    ws.once('error', (err) => done(err));
  });
}

/**
 * End a browser the way that flushes cookies and storage to disk: CDP `Browser.close`, then
 * SIGKILL the group if it is still alive after `timeoutMs`.
 */
export async function closeChromiumGracefully(
  browser: { pid: number; wsEndpoint: string },
  timeoutMs = 10_000,
): Promise<'graceful' | 'killed' | 'already-dead'> {
  if (!isProcessAlive(browser.pid)) {
    killProcessGroup(browser.pid);
    return 'already-dead';
  }
  const sent = await sendBrowserCommand(browser.wsEndpoint, 'Browser.close', Math.min(timeoutMs, 5_000)).then(
    () => true,
    () => false,
  );
  const exited = sent && (await waitForExit(browser.pid, timeoutMs));
  // Stragglers (renderers, zygotes) of the group go too.
  killProcessGroup(browser.pid);
  if (exited) return 'graceful';
  await waitForExit(browser.pid, 5_000);
  return 'killed';
}
