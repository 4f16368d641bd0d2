import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { ApiCallError, type ApiFailure, ApiUnreachableError } from './errors.ts';

/**
 * What a tool answers: its view as text (JSON) and as `structuredContent`; a refusal of the
 * API as an MCP tool error carrying the API's code, message and fields (never a protocol error:
 * the agent reads it and can fix its call).
 */

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A tool's work: its view, or an error (`ApiCallError` for the API's refusals). */
export type ToolBody<A> = (args: A, extra: Extra) => Promise<Record<string, unknown>>;

function ok(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
}

/** A refusal as an MCP tool error: the API's message, the fields at fault, its code and status. */
export function toolError(failure: ApiFailure): CallToolResult {
  const fields = Array.isArray(failure.details)
    ? (failure.details as { field?: unknown; message?: unknown }[])
        .filter((d) => typeof d?.field === 'string')
        .map((d) => `${String(d.field)}: ${String(d.message)}`)
    : [];
  const text = [`${failure.message} (${failure.code}, HTTP ${failure.status})`, ...fields].join('\n');
  return { isError: true, content: [{ type: 'text', text }], structuredContent: { error: failure } };
}

/** The tool's callback: `body`'s view, or its error as a tool error (`unexpected` hears of bugs). */
export function toolRunner<A>(
  unexpected: (err: unknown) => void,
  body: ToolBody<A>,
): (args: A, extra: Extra) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return ok(await body(args, extra));
    } catch (err) {
      if (err instanceof ApiCallError) return toolError(err.failure);
      if (err instanceof ApiUnreachableError) {
        return toolError({ status: 503, code: 'unreachable', message: err.message });
      }
      unexpected(err);
      return toolError({
        status: 500,
        code: 'internal_error',
        message: 'the tool failed on our side; retry later',
      });
    }
  };
}
