import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { jsonBody } from '../body.ts';
import { header } from '../events.ts';
import { baseUrlOf, type RouteRequest, type RouteResponse, rawResponse } from '../route.ts';
import { inProcessApi } from './in-process.ts';
import { HTTP_MAX_WAIT_SECONDS, WAIT_POLL_MS } from './limits.ts';
import { abortableSleep, createMcpServer } from './server.ts';

/**
 * MCP's Streamable HTTP transport at `POST /mcp`, inside the API's Lambda function: stateless
 * (no session: each request is authenticated by the authorizer like any route, and a new
 * server answers it), its answer buffered into one response, since API Gateway (HTTP API)
 * returns a Lambda's response whole. Progress notifications of a `wait_for_job` therefore
 * arrive with its result, and one call waits at most {@link HTTP_MAX_WAIT_SECONDS}.
 */

/** Answers one MCP request (JSON-RPC over HTTP POST) for the route's caller. */
export async function answerMcpRequest(req: RouteRequest): Promise<RouteResponse> {
  const { deps, event } = req;
  // Parsed here, as every route parses: a malformed body is the API's 400, which quotes none of it.
  const message = jsonBody(event, deps.maxBodyBytes);
  const server = createMcpServer({
    api: inProcessApi(req),
    wait: {
      now: () => deps.engine.clock().getTime(),
      sleep: abortableSleep,
      pollMs: WAIT_POLL_MS,
      maxWaitSeconds: HTTP_MAX_WAIT_SECONDS,
    },
    onUnexpectedError: (err) =>
      deps.engine.log.error('MCP tool failed', {
        error: err instanceof Error ? { name: err.name, message: err.message } : String(err),
      }),
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    // Buffered whole by API Gateway: keep-alive comments would only add bytes.
    keepAliveMs: 0,
  });
  try {
    await server.connect(transport);
    const headers = new Headers();
    for (const name of ['accept', 'content-type', 'mcp-protocol-version', 'last-event-id']) {
      const value = header(event.headers, name);
      if (value !== undefined) headers.set(name, value);
    }
    const url = `${baseUrlOf(req) || 'http://belay.invalid'}/mcp`;
    const response = await transport.handleRequest(new Request(url, { method: 'POST', headers }), {
      parsedBody: message,
    });
    const text = await response.text();
    const extra: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (name.startsWith('mcp-') || name === 'allow') extra[name] = value;
    });
    return rawResponse(response.status, response.headers.get('content-type') ?? 'text/plain', text, {
      headers: extra,
    });
  } finally {
    await server.close();
  }
}
