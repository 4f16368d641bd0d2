/**
 * Helpers for the browser integration tests: a tiny target site on loopback (plus an
 * "elsewhere" site the allowlist must keep the browser from), client processes, and checks
 * that no Chromium outlives a test file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { processes } from '../../../local/processes.ts';

export interface Site {
  origin: string;
  /** `127.0.0.1:<port>`: the allowlist entry for this site. */
  host: string;
  /** Requests received so far. */
  hits: () => number;
  stop: () => Promise<void>;
}

const FORM = `<!doctype html><title>Checkout</title><form><input id="name" name="name"></form>`;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return (server.address() as AddressInfo).port;
}

/**
 * A site with `/form` (a checkout form), `/login` (sets a persistent, HttpOnly login cookie)
 * and `/whoami` (echoes the login cookie).
 */
export async function startSite(): Promise<Site> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/login') {
      res.writeHead(200, {
        'content-type': 'text/html',
        'set-cookie': 'login=alice; Max-Age=86400; Path=/; HttpOnly; SameSite=Lax',
      });
      res.end('<!doctype html><title>Signed in</title><p>Welcome, Alice</p>');
      return;
    }
    if (path === '/whoami') {
      const login = /(?:^|;\s*)login=([^;]+)/.exec(req.headers.cookie ?? '')?.[1] ?? 'nobody';
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Who</title><p id="who">${login}</p>`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(path === '/form' ? FORM : '<!doctype html><title>Home</title><p>home</p>');
  });
  const port = await listen(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    hits: () => hits,
    stop: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

export interface ClientRun {
  child: ChildProcess;
  /** Resolves with the first JSON line the client prints. */
  firstJson: Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

const CLIENT = fileURLToPath(new URL('../../fixtures/browser/client.ts', import.meta.url));

/** Run `test/fixtures/browser/client.ts` in its own Node process with the adapter's environment. */
export function runClient(args: string[], env: { apiKey: string; baseUrl: string }): ClientRun {
  const child = spawn(process.execPath, ['--import', 'tsx', CLIENT, ...args], {
    env: { ...process.env, ANCHORBROWSER_API_KEY: env.apiKey, ANCHORBROWSER_BASE_URL: env.baseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | string>((ok) =>
    child.once('exit', (code, signal) => ok(signal ?? code ?? -1)),
  );
  const firstJson = new Promise<Record<string, unknown>>((ok, fail) => {
    let buffer = '';
    child.stdout?.on('data', (d: Buffer) => {
      buffer += d.toString();
      const line = buffer
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (line) ok(JSON.parse(line) as Record<string, unknown>);
    });
    void exited.then((code) =>
      fail(new Error(`client exited (${code}) before answering: ${stderr.slice(-2000)}`)),
    );
  });
  return { child, firstJson, exited };
}

/** Live (non-zombie) processes whose command line contains `text`. */
export function liveProcessesMentioning(text: string): number[] {
  return processes()
    .filter((p) => p.pid !== process.pid && p.cmdline.includes(text))
    .map((p) => p.pid);
}

/** Poll `check` until it returns a value other than undefined, or fail after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
