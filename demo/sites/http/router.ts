/**
 * The request/response shapes of the demo sites and a small router over them: enough for
 * server-rendered pages and form posts, with no web framework.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { DropMode } from './faults.ts';

/** A parsed request, as handlers see it. */
export interface SiteRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Named path parameters (`/products/:sku` -> `{ sku }`). */
  params: Record<string, string>;
  /** The urlencoded form body (empty for other bodies). */
  form: URLSearchParams;
  /** The raw body (admin endpoints read JSON from it). */
  body: string;
  cookies: Record<string, string>;
  headers: IncomingHttpHeaders;
  remoteAddress: string | undefined;
}

/** What a handler answers. */
export interface SiteResponse {
  status: number;
  headers?: Record<string, string | string[]>;
  body?: string;
  /** The write is committed; drop the answer this way instead of sending it (the "drop the response" fault). */
  dropAfterCommit?: DropMode;
}

export type Handler = (req: SiteRequest) => SiteResponse | Promise<SiteResponse>;

interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: Handler;
}

export type RouteMatch = { handler: Handler; params: Record<string, string> } | 'method_not_allowed' | null;

/** Routes by method and path pattern (`:name` matches one segment). */
export class Router {
  readonly #routes: Route[] = [];

  /** Adds a route; first match wins. */
  on(method: string, path: string, handler: Handler): this {
    const names: string[] = [];
    const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    this.#routes.push({ method, pattern: new RegExp(`^${source}$`), names, handler });
    return this;
  }

  get(path: string, handler: Handler): this {
    return this.on('GET', path, handler);
  }

  post(path: string, handler: Handler): this {
    return this.on('POST', path, handler);
  }

  /** The handler for a request, `method_not_allowed` when only the method differs, or null. */
  match(method: string, path: string): RouteMatch {
    let pathMatched = false;
    for (const route of this.#routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      pathMatched = true;
      const wanted = method === 'HEAD' ? 'GET' : method;
      if (route.method !== wanted) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? '');
      });
      return { handler: route.handler, params };
    }
    return pathMatched ? 'method_not_allowed' : null;
  }
}

/** An HTML page. */
export function html(
  body: string,
  status = 200,
  headers: Record<string, string | string[]> = {},
): SiteResponse {
  return { status, body, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } };
}

/** A JSON document. */
export function json(value: unknown, status = 200): SiteResponse {
  return {
    status,
    body: JSON.stringify(value, null, 2),
    headers: { 'content-type': 'application/json; charset=utf-8' },
  };
}

/** A 303 See Other (post/redirect/get). */
export function redirect(location: string, headers: Record<string, string | string[]> = {}): SiteResponse {
  return { status: 303, headers: { location, ...headers } };
}

/** Parses a `Cookie` header. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    try {
      out[name] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // A cookie that is not ours and not valid percent-encoding: ignore it.
    }
  }
  return out;
}

/** A path with a query string, for redirects (`withQuery('/a', { q: 'x' })` -> `/a?q=x`). */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}
