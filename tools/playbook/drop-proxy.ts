/**
 * A loopback reverse proxy in front of an application, for `npm run playbook -- test`: every
 * page and request of the application goes through it, so the test can do to any site what a
 * real network does to a write (the site commits it, and the answer never arrives) and count
 * the write requests the site committed, whatever the site records.
 *
 * Armed, it forwards the next unsafe request (POST, PUT, PATCH, DELETE) that is the step's write
 * (its committing request: a heartbeat or autosave the page sends of its own is let through) to
 * the site, reads the site's whole answer (the write is committed), and resets the browser's
 * connection without a byte of it. Chromium sends a request again by itself after such a reset
 * on a reused connection; a resend reaches the site as any request does, and counts.
 * Every unsafe request is logged with its answer's status, so a test counts the committing
 * request apart from the page's background requests.
 *
 * Hand-written on `node:http`: the two things needed (hold the whole answer, then reset the
 * client's socket instead of writing it) are what a general proxy library hides.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UNSAFE_METHODS } from '../../lambdas/lib/browser/write-guard.ts';

/** An unsafe request the site answered (or did not), as the proxy saw it. */
export interface ProxiedWrite {
  method: string;
  /** The path, without the query. */
  path: string;
  /** The site's status; absent when the site did not answer. */
  status?: number;
  /** When it reached the proxy (epoch ms). */
  at: number;
  dropped: boolean;
}

/** Which requests are the write: (method, path) -> is it. */
export type WriteMatcher = (method: string, path: string) => boolean;

export interface DropProxy {
  /** `http://127.0.0.1:<port>`: the application's base URL for the stack. */
  url: string;
  /** Drops the answer of the next unsafe request that `matches` (default: any), after the site answered it. */
  armDrop(matches?: WriteMatcher): void;
  /** Disarms without dropping (the fault's window closed). */
  disarm(): void;
  /** Answers dropped so far. */
  readonly dropped: number;
  /** Unsafe requests the site answered with a status below 400 (committed writes), so far. */
  readonly committedWrites: number;
  /** Every unsafe request so far, in order. */
  readonly writes: readonly ProxiedWrite[];
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Starts the proxy on a free loopback port, forwarding to `upstream` (an http:// origin).
 *
 * @example
 * const proxy = await startDropProxy('http://127.0.0.1:4102');
 * proxy.armDrop(); // the next POST commits on the site; its answer is reset
 */
export async function startDropProxy(upstream: string): Promise<DropProxy> {
  const target = new URL(upstream);
  let armed: WriteMatcher | undefined;
  let dropped = 0;
  let committedWrites = 0;
  const writes: ProxiedWrite[] = [];
  let self = '';
  const sockets = new Set<Socket>();

  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const unsafe = UNSAFE_METHODS.has(req.method ?? '');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const drop = unsafe && armed?.(req.method ?? '', path) === true;
    if (drop) armed = undefined;
    const logged: ProxiedWrite | undefined = unsafe
      ? { method: req.method ?? '', path, at: Date.now(), dropped: drop }
      : undefined;
    if (logged) writes.push(logged);
    const payload = await body(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase())),
    );
    const answer = await new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>(
      (resolve, reject) => {
        const out = request(
          {
            host: target.hostname,
            port: target.port,
            method: req.method,
            path: req.url,
            headers: { ...headers, 'content-length': String(payload.byteLength) },
          },
          (r) => {
            body(r).then(
              (b) => resolve({ status: r.statusCode ?? 502, headers: r.headers, body: b }),
              reject,
            );
          },
        );
        out.on('error', reject);
        out.end(payload);
      },
    );
    if (logged) logged.status = answer.status;
    if (unsafe && answer.status < 400) committedWrites++;
    if (drop) {
      dropped++;
      // The site has committed; the browser hears nothing but a reset.
      req.socket.resetAndDestroy();
      return;
    }
    const outHeaders = Object.fromEntries(
      Object.entries(answer.headers).filter(
        ([k]) => !HOP_BY_HOP.has(k.toLowerCase()) && k !== 'content-length',
      ),
    );
    // A redirect to the site's own origin stays behind the proxy.
    const location = answer.headers.location;
    if (typeof location === 'string' && location.startsWith(target.origin))
      outHeaders.location = self + location.slice(target.origin.length);
    res.writeHead(answer.status, { ...outHeaders, 'content-length': String(answer.body.byteLength) });
    res.end(answer.body);
  };

  const server = createServer((req, res) => {
    forward(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('the application did not answer the proxy');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: self,
    armDrop: (matches = () => true) => {
      armed = matches;
    },
    disarm: () => {
      armed = undefined;
    },
    get dropped() {
      return dropped;
    },
    get committedWrites() {
      return committedWrites;
    },
    get writes() {
      return writes;
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
