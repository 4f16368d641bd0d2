import { type BelayApi, MCP_CALL_HEADERS } from '../../../lambdas/lib/api/mcp/api.ts';
import { ApiUnreachableError } from '../../../lambdas/lib/api/mcp/errors.ts';

/** How long one call of the API may take before `belay mcp` gives up on it. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * The HTTP API as `belay mcp`'s tools call it: `fetch` with the bearer key and the MCP
 * channel's header; the API's answer as it came (JSON, or bytes as base64), errors included.
 */
export function httpApi(baseUrl: string, key: string): BelayApi {
  const url = baseUrl.replace(/\/+$/, '');
  return async ({ method, path, body }) => {
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...MCP_CALL_HEADERS,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error) : (err as Error);
      throw new ApiUnreachableError(url, cause.message, { cause: err });
    }
    const contentType = res.headers.get('content-type') ?? '';
    if (/json/i.test(contentType)) {
      const text = await res.text();
      try {
        return { status: res.status, contentType, json: text ? (JSON.parse(text) as unknown) : undefined };
      } catch {
        return { status: res.status, contentType };
      }
    }
    return {
      status: res.status,
      contentType,
      base64: Buffer.from(await res.arrayBuffer()).toString('base64'),
    };
  };
}
