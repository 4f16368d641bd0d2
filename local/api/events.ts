import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthorizerContext, HttpApiEvent } from '../../lambdas/lib/api/events.ts';

/**
 * node:http requests as API Gateway HTTP API (payload format 2.0) events, the way API
 * Gateway builds them: lower-case header names, repeated headers and query parameters
 * joined with commas, the raw path and query string, the authorizer's context.
 */

export function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

export function toHttpApiEvent(input: {
  req: IncomingMessage;
  body: Buffer;
  /**
   * The API's own host (`127.0.0.1:3000`), as API Gateway puts its own domain there: never the
   * request's `Host` header, which the caller chooses (links built from it would point anywhere).
   */
  domainName: string;
  routeKey: string;
  pathParameters?: Record<string, string>;
  authorizer?: AuthorizerContext;
}): HttpApiEvent {
  const { req, body } = input;
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
  // As API Gateway does, tell the function how the client reached it.
  const headers: Record<string, string> = { 'x-forwarded-proto': 'http', ...headersOf(req) };
  // As API Gateway does with payload 2.0: cookies move out of the headers into `cookies`.
  const cookies = (headers.cookie ?? '')
    .split(';')
    .map((c) => c.trim())
    .filter(Boolean);
  delete headers.cookie;
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: input.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers,
    ...(cookies.length > 0 ? { cookies } : {}),
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(input.pathParameters ? { pathParameters: input.pathParameters } : {}),
    ...(body.byteLength > 0 ? { body: body.toString('utf8') } : {}),
    isBase64Encoded: false,
    requestContext: {
      requestId: randomUUID(),
      routeKey: input.routeKey,
      stage: '$default',
      timeEpoch: now,
      domainName: input.domainName,
      http: {
        method: (req.method ?? 'GET').toUpperCase(),
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      ...(input.authorizer ? { authorizer: { lambda: { ...input.authorizer } } } : {}),
    },
  };
}
