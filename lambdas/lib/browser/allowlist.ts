/**
 * The navigation allowlist: a job may only reach the domains of the applications it was
 * granted. Enforced with one context-level `route('**\/*')` per CDP connection, whose handler
 * reads the current list, so a warm reattach updates the list instead of stacking handlers.
 */
import type { BrowserContext, Route } from 'playwright-core';
import { UNSAFE_METHODS, type UnsafeRequestHook } from './write-guard.ts';

/** Schemes that never leave the browser. */
const LOCAL_SCHEMES = new Set(['about:', 'data:', 'blob:']);
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };

/**
 * True when `url` may be requested. Entries are hostnames (`shop.example`), wildcards
 * (`*.example.com`: subdomains only) or either with a port (`127.0.0.1:8080`: that port only).
 * An empty list allows everything.
 *
 * @example
 * isAllowedUrl('https://a.shop.example/cart?x=1', ['*.shop.example']) // true
 * isAllowedUrl('http://127.0.0.1:9000/', ['127.0.0.1:8080'])         // false
 */
export function isAllowedUrl(url: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (LOCAL_SCHEMES.has(parsed.protocol)) return true;
  const defaultPort = DEFAULT_PORTS[parsed.protocol];
  if (defaultPort === undefined) return false;
  const host = parsed.hostname.toLowerCase();
  const port = parsed.port || defaultPort;
  return allowed.some((entry) => {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.trim().toLowerCase());
    const pattern = match?.[1] ?? '';
    if (match?.[2] !== undefined && match[2] !== port) return false;
    if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1));
    return host === pattern;
  });
}

/** A URL fit for a report: origin and path, no query or fragment (they may carry secrets). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return LOCAL_SCHEMES.has(u.protocol) ? `${u.protocol}...` : `${u.origin}${u.pathname}`;
  } catch {
    return '<invalid url>';
  }
}

/**
 * The request policy of one CDP connection: the allowlist's current entries, where blocked
 * requests are reported, and the write guard's hook while a write step acts.
 */
export interface AllowlistState extends UnsafeRequestHook {
  allowed: readonly string[];
  blocked: string[];
  installed: boolean;
  /** Read-only (a drift check): every unsafe request is refused, and listed here (method, origin and path). */
  refusing?: string[] | undefined;
}

/**
 * Make `state` the policy of `context`. Installs the route handler once per connection; later
 * calls only swap the list and the report sink.
 */
export async function applyAllowlist(
  context: BrowserContext,
  state: AllowlistState,
  allowed: readonly string[],
): Promise<string[]> {
  state.allowed = [...allowed];
  state.blocked = [];
  if (allowed.length > 0) await installRequestPolicy(context, state);
  return state.blocked;
}

/**
 * Installs the connection's one route handler (once): requests outside the allowlist are
 * blocked; read-only, an unsafe request is refused; else it waits for the write guard's hook,
 * when one is set, before it goes, or is aborted when the hook refuses it.
 */
export async function installRequestPolicy(context: BrowserContext, state: AllowlistState): Promise<void> {
  if (state.installed) return;
  state.installed = true;
  try {
    await context.route('**/*', async (route: Route) => {
      const request = route.request();
      const url = request.url();
      if (!isAllowedUrl(url, state.allowed)) {
        state.blocked.push(redactUrl(url));
        return route.abort('blockedbyclient').catch(() => undefined);
      }
      if (state.refusing && UNSAFE_METHODS.has(request.method())) {
        state.refusing.push(`${request.method()} ${redactUrl(url)}`);
        return route.abort('blockedbyclient').catch(() => undefined);
      }
      const hold = UNSAFE_METHODS.has(request.method()) ? state.beforeUnsafe : state.beforeOther;
      const verdict = hold ? await hold(request).catch(() => undefined) : undefined;
      // A write step's second committing request: aborted, never sent (the guard reports it).
      if (verdict === 'refuse') return route.abort('blockedbyclient').catch(() => undefined);
      // A page closing mid-request rejects this; nothing to report then.
      return route.fallback().catch(() => undefined);
    });
  } catch (err) {
    state.installed = false;
    throw err;
  }
}

/** Read-only until `end`: every unsafe request the context's pages send is refused (a drift check). */
export interface RefusedWrites {
  /** Stops refusing; the requests refused (method, origin and path), in order. */
  end(): string[];
}

/** Makes the connection read-only (see {@link RefusedWrites}). */
export async function refuseWrites(context: BrowserContext, state: AllowlistState): Promise<RefusedWrites> {
  const refused: string[] = [];
  state.refusing = refused;
  await installRequestPolicy(context, state);
  return {
    end: () => {
      if (state.refusing === refused) state.refusing = undefined;
      return [...refused];
    },
  };
}
