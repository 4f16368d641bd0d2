import { CHANNEL_HEADER } from '../jobs/answer-rules.ts';
import { ApiCallError, type ApiFailure } from './errors.ts';

/**
 * The HTTP API as Belay's MCP server reaches it. Every tool is one or two calls of the API's
 * own routes, so no rule exists twice: the same validation, tenant check, roles, redaction
 * and error messages. In the API's process (`/mcp`) the calls go to the router directly
 * (`in-process.ts`); `belay mcp` (stdio) makes them over HTTP (`tools/cli/belay/mcp-api.ts`).
 */

/** One call of the API. `path` is absolute (`/jobs/abc`), with its query string if any. */
export interface ApiRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

/** What the API answered: JSON (`json`), or bytes (`base64`, e.g. a screenshot). */
export interface ApiReply {
  status: number;
  contentType: string;
  json?: unknown;
  base64?: string;
}

/** The API, called as the holder of one key (the MCP client's), with the MCP channel's header. */
export type BelayApi = (request: ApiRequest) => Promise<ApiReply>;

/** The headers every MCP call carries: answers to people's waits then follow the agents' rules. */
export const MCP_CALL_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  [CHANNEL_HEADER.toLowerCase()]: 'mcp',
});

/** The reply's JSON body, or `ApiCallError` with the API's own code and message. */
export function expectJson<T>(reply: ApiReply): T {
  if (reply.status >= 200 && reply.status < 300 && reply.json !== undefined) return reply.json as T;
  throw new ApiCallError(failureOf(reply));
}

/** The API's error envelope of a reply (`{"error": {code, message, details}}`), or a stand-in. */
export function failureOf(reply: ApiReply): ApiFailure {
  const error = (
    reply.json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined
  )?.error;
  return {
    status: reply.status,
    code: typeof error?.code === 'string' ? error.code : `http_${reply.status}`,
    message:
      typeof error?.message === 'string'
        ? error.message
        : reply.status < 300
          ? 'the API answered with something that is not JSON'
          : `the API answered HTTP ${reply.status}`,
    ...(error?.details === undefined ? {} : { details: error.details }),
  };
}

/** A path segment, encoded. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
