import { requestTenant } from '../auth.ts';
import { errorBody } from '../errors.ts';
import { type HttpApiEvent, type HttpApiResult, header } from '../events.ts';
import type { RouteRequest } from '../route.ts';
import { type ApiReply, type BelayApi, MCP_CALL_HEADERS } from './api.ts';

/**
 * The API as the `/mcp` route's tools call it: each call is an event for the API's own router
 * (the route request's `dispatch`), made as the MCP request's caller (the authorizer's context is copied:
 * same tenant, roles and key, hence the same rate limit), never over the network. Errors come
 * back as the API would send them (a 5xx says nothing of its cause, which is logged).
 */
export function inProcessApi(req: Pick<RouteRequest, 'deps' | 'event' | 'dispatch'>): BelayApi {
  const { deps, event: from, dispatch } = req;
  let calls = 0;
  return async ({ method, path, body }) => {
    const url = new URL(path, 'http://belay.invalid');
    calls += 1;
    const query: Record<string, string> = {};
    for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
    const event: HttpApiEvent = {
      version: '2.0',
      routeKey: from.routeKey,
      rawPath: url.pathname,
      rawQueryString: url.search.replace(/^\?/, ''),
      headers: {
        ...MCP_CALL_HEADERS,
        ...(header(from.headers, 'host') ? { host: header(from.headers, 'host') } : {}),
        ...(header(from.headers, 'x-forwarded-proto')
          ? { 'x-forwarded-proto': header(from.headers, 'x-forwarded-proto') }
          : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      isBase64Encoded: false,
      requestContext: {
        ...from.requestContext,
        requestId: `${from.requestContext.requestId}#${calls}`,
        http: { ...from.requestContext.http, method, path: url.pathname },
      },
    };
    try {
      return toReply(await dispatch(event));
    } catch (err) {
      const { statusCode, body: failure } = errorBody(err, { tenantId: requestTenant(from) });
      if (statusCode >= 500) {
        deps.engine.log.error('MCP tool call failed', {
          path: url.pathname,
          method,
          error: err instanceof Error ? { name: err.name, message: err.message } : String(err),
        });
      }
      return { status: statusCode, contentType: 'application/json', json: failure };
    }
  };
}

function toReply(result: HttpApiResult): ApiReply {
  const contentType = header(result.headers, 'content-type') ?? 'application/json';
  if (result.isBase64Encoded) return { status: result.statusCode, contentType, base64: result.body ?? '' };
  if (/json/i.test(contentType)) {
    try {
      return { status: result.statusCode, contentType, json: JSON.parse(result.body ?? '') as unknown };
    } catch {
      return { status: result.statusCode, contentType };
    }
  }
  return { status: result.statusCode, contentType };
}
