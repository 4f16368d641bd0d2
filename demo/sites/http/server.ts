/**
 * Runs one demo site on its own loopback port: parses requests, keeps the request log,
 * applies the slow-down and drop-response faults, and routes to the admin endpoint, the
 * sign-in pages and the site's own pages.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SiteStartError } from '../errors.ts';
import { handleAdmin } from './admin.ts';
import { registerAuthRoutes } from './auth.ts';
import { esc } from './html.ts';
import { type LatencyProfile, latencySampler } from './latency.ts';
import type { SiteRequest, SiteResponse } from './router.ts';
import { html, parseCookies, Router } from './router.ts';
import type { DropMode, SiteDefinition } from './runtime.ts';
import { DEFAULT_FAULTS, initialState, SiteRuntime } from './runtime.ts';
import { JsonStore } from './store.ts';

const MAX_BODY_BYTES = 1_000_000;

export interface StartSiteOptions {
  /** 0 = any free port. */
  port: number;
  dataDir?: string;
  adminToken: string;
  /** De-duplicate writes by key (`FaultFlags.dedupe`); absent: as the persisted state says (default true). */
  dedupe?: boolean;
  /** Answer times to imitate (`FaultFlags.latency`); absent: as the persisted state says (default none). */
  latency?: LatencyProfile;
}

export interface RunningSite<D> {
  name: string;
  baseUrl: string;
  runtime: SiteRuntime<D>;
  stop(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new RangeError('body too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, out: SiteResponse, head: boolean, keepAlive = false): void {
  res.statusCode = out.status;
  for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
  // A de-duplicating site closes every connection: a browser silently re-sends a POST whose
  // reused connection died, which would hide the "drop the response" fault behind an
  // idempotent replay. One that does not de-duplicate keeps connections alive, as real sites
  // do, and so meets the browser's re-sends.
  if (!keepAlive) res.setHeader('connection', 'close');
  res.setHeader('cache-control', 'no-store');
  res.end(head ? undefined : out.body);
}

/**
 * The write is committed; the answer is lost. `status-line`: only a status line goes out, then
 * the connection closes (the browser shows an empty page). `reset` and `close`: the connection
 * is reset or closed without a single byte, which is when a browser may send the same request
 * again by itself on another connection (a site that de-duplicates answers the repeat with the
 * first write; one that does not commits it again).
 */
function dropResponse(res: ServerResponse, mode: DropMode): void {
  const socket = res.socket;
  if (!socket) return;
  if (mode === 'reset') socket.resetAndDestroy();
  else if (mode === 'close') socket.destroy();
  else socket.end('HTTP/1.1 200 OK\r\n');
}

/** Starts a site and resolves once it listens. */
export async function startSite<D>(
  def: SiteDefinition<D>,
  options: StartSiteOptions,
): Promise<RunningSite<D>> {
  const store = new JsonStore(options.dataDir, def.info.name, () => initialState(def));
  // State written before a fault switch existed gets its default.
  store.state.faults = { ...DEFAULT_FAULTS, ...store.state.faults };
  if (options.dedupe !== undefined) store.state.faults.dedupe = options.dedupe;
  if (options.latency !== undefined) store.state.faults.latency = options.latency;
  // One sampler per profile set: the same profile gives the same sequence of delays.
  let sampler: { profile: LatencyProfile; next: () => number } | undefined;
  const latencyMs = (): number => {
    const profile = store.state.faults.latency;
    if (!profile) return 0;
    if (sampler?.profile !== profile) sampler = { profile, next: latencySampler(profile, def.info.name) };
    return sampler.next();
  };
  const rt = new SiteRuntime(def, store, options.adminToken);
  const router = new Router();
  registerAuthRoutes(router, rt);
  def.routes(router, rt);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(req);
    const contentType = req.headers['content-type'] ?? '';
    const sreq: SiteRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      params: {},
      form: contentType.startsWith('application/x-www-form-urlencoded')
        ? new URLSearchParams(body)
        : new URLSearchParams(),
      body,
      cookies: parseCookies(req.headers.cookie),
      headers: req.headers,
      remoteAddress: req.socket.remoteAddress,
    };
    if (url.pathname.startsWith('/__admin/')) {
      send(res, handleAdmin(rt, sreq), false);
      return;
    }
    if (url.pathname === '/__busy') {
      // A busy page's own request (`FaultFlags.busyPages`): answered `ms` (at most 200) later.
      await sleep(Math.min(Math.max(Math.trunc(Number(url.searchParams.get('ms'))) || 0, 0), 200));
      send(res, html('', 200), false, store.state.faults.dedupe === false);
      return;
    }
    if (store.state.faults.unavailable) {
      send(res, html('<h1>Service unavailable</h1><p>Please try again in a few minutes.</p>', 503), false);
      return;
    }
    const slowMs = store.state.faults.slowMs + latencyMs();
    if (slowMs > 0) await sleep(slowMs);
    const match = router.match(sreq.method, sreq.path);
    let out: SiteResponse;
    if (match === null) out = html(`<h1>Not found</h1><p>${esc(sreq.path)}</p>`, 404);
    else if (match === 'method_not_allowed') out = html('<h1>Method not allowed</h1>', 405);
    else out = await match.handler({ ...sreq, params: match.params });
    rt.logRequest({ method: sreq.method, path: sreq.path, status: out.status, at: new Date().toISOString() });
    if (out.dropAfterCommit) {
      dropResponse(res, out.dropAfterCommit);
      return;
    }
    send(res, out, sreq.method === 'HEAD', store.state.faults.dedupe === false);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error(`[${def.info.name}] ${req.method} ${req.url} failed:`, err);
      if (!res.headersSent) send(res, html('<h1>Something went wrong</h1>', 500), false);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) => reject(new SiteStartError(def.info.name, options.port, { cause })));
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    name: def.info.name,
    baseUrl: `http://127.0.0.1:${port}`,
    runtime: rt,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
