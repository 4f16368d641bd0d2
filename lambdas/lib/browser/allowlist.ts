/**
 * The navigation allowlist: a job may only reach the domains of the applications it was
 * granted. Enforced with one context-level `route('**\/*')` per CDP connection, whose handler
 * reads the current list, so a warm reattach updates the list instead of stacking handlers.
 */
import type { BrowserContext, Route } from 'playwright-core';

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

/** The allowlist of one CDP connection: current entries and where blocked requests are reported. */
export interface AllowlistState {
  allowed: readonly string[];
  blocked: string[];
  installed: boolean;
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
  if (!state.installed && allowed.length > 0) {
    state.installed = true;
    try {
      await context.route('**/*', (route: Route) => {
        const url = route.request().url();
        // A page closing mid-request rejects these; nothing to report then.
        if (isAllowedUrl(url, state.allowed)) return route.fallback().catch(() => undefined);
        state.blocked.push(redactUrl(url));
        return route.abort('blockedbyclient').catch(() => undefined);
      });
    } catch (err) {
      state.installed = false;
      throw err;
    }
  }
  return state.blocked;
}
