import type { Principal, Role } from '../auth/api-keys.ts';
import { jsonBody } from './body.ts';
import type { ApiDeps } from './deps.ts';
import { type HttpApiEvent, type HttpApiResult, header } from './events.ts';

/**
 * A route of the API: each use case (`jobs/`, `accounts/`, `reports/`, `webhooks/`) exports
 * its own list, and `routes.ts` concatenates them into the one table used by the handler, the
 * local server (which routes need a key) and the CDK stack (one API Gateway route per entry,
 * the authorizer where `auth`).
 */

export interface RouteRequest {
  event: HttpApiEvent;
  deps: ApiDeps;
  /** Present on routes with `auth: true`. */
  principal: Principal;
  params: Record<string, string>;
  /**
   * Answers another request through this API's router, in this process, as the router answers
   * any event (the MCP endpoint's tools call the API's routes this way). Throws `ApiError`s.
   */
  dispatch(event: HttpApiEvent): Promise<HttpApiResult>;
}

export interface RouteResponse {
  statusCode: number;
  /** Sent as JSON, unless `raw` is given. */
  body: unknown;
  headers?: Record<string, string>;
  /** A body sent as it is (HTML, a JPEG as base64); `headers` then say its `Content-Type`. */
  raw?: { body: string; isBase64Encoded: boolean };
  /** `Set-Cookie` values (payload 2.0 `cookies`). */
  cookies?: string[];
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway route syntax: `/jobs/{jobId}`. */
  path: string;
  /** Needs `Authorization: Bearer <api key>` (the Lambda authorizer in AWS). */
  auth: boolean;
  /** One of these roles is needed (admin holds every role); empty = any key of the tenant. */
  roles: Role[];
  handle(req: RouteRequest): Promise<RouteResponse>;
}

/** Any key of the tenant may call the route. */
export const ANY_ROLE: Role[] = [];

/** A response whose body is not JSON: `contentType` names it; a Buffer goes as base64. */
export function rawResponse(
  statusCode: number,
  contentType: string,
  body: string | Buffer,
  extra: { headers?: Record<string, string>; cookies?: string[] } = {},
): RouteResponse {
  return {
    statusCode,
    body: null,
    headers: { 'Content-Type': contentType, ...extra.headers },
    raw:
      typeof body === 'string'
        ? { body, isBase64Encoded: false }
        : { body: body.toString('base64'), isBase64Encoded: true },
    ...(extra.cookies ? { cookies: extra.cookies } : {}),
  };
}

export function ok(body: unknown, statusCode = 200, headers?: Record<string, string>): RouteResponse {
  return { statusCode, body, ...(headers ? { headers } : {}) };
}

/** The request's JSON body, within the API's size limit. */
export function bodyOf(req: RouteRequest): unknown {
  return jsonBody(req.event, req.deps.maxBodyBytes);
}

/**
 * The API's base URL for links: configured (`BELAY_API_URL`), else where this request came
 * in (API Gateway's domain name; the local server's host), so links work without setup.
 */
export function baseUrlOf(req: Pick<RouteRequest, 'deps' | 'event'>): string {
  if (req.deps.baseUrl) return req.deps.baseUrl;
  const host = req.event.requestContext.domainName ?? header(req.event.headers, 'host');
  if (!host) return '';
  const proto = header(req.event.headers, 'x-forwarded-proto') ?? 'https';
  return `${proto}://${host}`;
}
