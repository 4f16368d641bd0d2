/**
 * The local Anchor-compatible browser service, in process. The official `anchorbrowser` SDK
 * talks to it unchanged (`baseURL` = {@link AnchorService.baseUrl}); each session is a
 * detached Chromium that outlives this service, so a restart on the same data dir keeps live
 * sessions reachable.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { resolve } from 'node:path';
import { assertChromium } from '../chromium.ts';
import { IdentityRegistry } from './identities.ts';
import { handleLiveViewUpgrade, isLiveViewUpgrade } from './live-view.ts';
import { proxyCdpUpgrade } from './proxy.ts';
import { handleRequest } from './routes.ts';
import { createSessionIdentities } from './session-identities.ts';
import { SessionManager } from './sessions.ts';
import type { SessionRecord } from './store.ts';
import { Store } from './store.ts';
import { VolumeStore } from './volumes.ts';

export type { SessionRecord } from './store.ts';

export interface AnchorServiceOptions {
  /** Loopback port; 0 (default) picks a free one. */
  port?: number;
  /** Key clients must send (`anchor-api-key` header / `apiKey` query). Default: generated once and kept in `<dataDir>/api-key`. */
  apiKey?: string;
  /** Session records, browser dirs and profiles. */
  dataDir: string;
  /** Length of an API minute in ms (default 60 000). Tests pass 1 000 so timeouts count seconds. */
  minuteMs?: number;
  /** Chromium binary (default `CHROMIUM_PATH` or `/usr/lib/chromium/chromium`). */
  chromiumPath?: string;
  /**
   * Refuse to start without that binary (default true). The local stack passes false when its
   * jobs use a real Anchor account: the service then launches no browser.
   */
  requireChromium?: boolean;
  /** Log sink (default: silent). */
  log?: (line: string) => void;
}

export interface AnchorService {
  /** `http://127.0.0.1:<port>`: the SDK's `baseURL`. */
  baseUrl: string;
  port: number;
  apiKey: string;
  dataDir: string;
  /** PID of the process serving (this one, in process). */
  pid: number;
  /** Close the server. Browsers live on (a restart re-adopts them) unless `endSessions`. */
  stop(options?: { endSessions?: boolean }): Promise<void>;
  /** Fault injection: SIGKILL a session's Chromium, as if it crashed. Resolves with its PID. */
  killBrowser(sessionId: string): Promise<number>;
  /** A session's record (status, browser PID and port), or undefined. */
  session(sessionId: string): SessionRecord | undefined;
  /** Every session known, live and ended. */
  sessions(): SessionRecord[];
  /** PIDs of every Chromium this instance launched or adopted. */
  browserPids(): number[];
}

/**
 * Start the service on 127.0.0.1.
 *
 * @example
 * const anchor = await startAnchorService({ dataDir: '.local/test-anchor', minuteMs: 1_000 });
 * const client = new Anchorbrowser({ apiKey: anchor.apiKey, baseURL: anchor.baseUrl });
 * // ...
 * await anchor.stop({ endSessions: true });
 */
export async function startAnchorService(options: AnchorServiceOptions): Promise<AnchorService> {
  // No Chromium, no sessions: said now, with how to install it, not at the first job's session.
  if (options.requireChromium ?? true) assertChromium(options.chromiumPath);
  const dataDir = resolve(options.dataDir);
  const store = new Store(dataDir);
  await store.init();
  const apiKey = options.apiKey ?? (await store.apiKey());
  const log = options.log ?? ((): void => undefined);
  const minuteMs = options.minuteMs ?? 60_000;
  const identities = new IdentityRegistry({ dataDir, minuteMs });
  await identities.init();
  const volumes = new VolumeStore(dataDir);
  await volumes.init();
  const sessions = new SessionManager({
    store,
    volumes,
    minuteMs,
    chromiumPath: options.chromiumPath,
    log,
    identities: createSessionIdentities(identities, log),
  });

  const expected = Buffer.from(apiKey);
  const checkKey = (key: string | undefined): boolean => {
    const given = Buffer.from(key ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  let baseUrl = '';
  const ctx = { sessions, store, identities, volumes, checkKey, baseUrl: (): string => baseUrl, apiKey };
  // Listen first (a port in use must not touch any session), answer once records are loaded.
  let markLoaded = (): void => undefined;
  const loaded = new Promise<void>((ok) => {
    markLoaded = ok;
  });
  const server = createServer((req, res) => void loaded.then(() => handleRequest(ctx, req, res)));
  const upgraded = new Set<Socket>();
  server.on('upgrade', (req, socket, head) => {
    upgraded.add(socket as Socket);
    socket.once('close', () => upgraded.delete(socket as Socket));
    void loaded.then(() =>
      isLiveViewUpgrade(req)
        ? handleLiveViewUpgrade(req, socket, head, sessions, apiKey).catch(() => socket.destroy())
        : proxyCdpUpgrade(req, socket, head, sessions, checkKey),
    );
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  try {
    await sessions.load();
  } catch (err) {
    server.close();
    server.closeAllConnections();
    throw err;
  }
  markLoaded();
  log(`listening on ${baseUrl}`);

  let stopping: Promise<void> | undefined;
  return {
    baseUrl,
    port,
    apiKey,
    dataDir,
    pid: process.pid,
    stop(stopOptions = {}): Promise<void> {
      stopping ??= (async () => {
        const closed = new Promise<void>((ok) => server.close(() => ok()));
        await sessions.stop(stopOptions.endSessions ?? false);
        for (const socket of upgraded) socket.destroy();
        server.closeAllConnections();
        await closed;
      })();
      return stopping;
    },
    killBrowser: (id) => sessions.killBrowser(id),
    session: (id) => sessions.get(id),
    sessions: () => sessions.list(),
    browserPids: () => [...sessions.browserPids],
  };
}
