import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';
import { HTTP_MAX_WAIT_SECONDS } from './limits.ts';
import { RESOURCE_URIS, TOOL_NAMES } from './names.ts';

const JsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough()
  .meta({ id: 'JsonRpcMessage', description: 'A JSON-RPC 2.0 message of the Model Context Protocol.' });

/** The MCP endpoint in the OpenAPI document (its tools are described by `tools/list` and the MCP guide). */
export const registerMcpPaths: RegisterPaths = (r, { security, error, common }) => {
  r.registerPath({
    method: 'post',
    path: '/mcp',
    summary: 'Model Context Protocol, Streamable HTTP (stateless): the same jobs for agent runtimes',
    description: [
      'One JSON-RPC message per request, authenticated with the same API key as every route (the tenant is the key’s; each tool needs the role of the route it calls).',
      'Send Accept: application/json, text/event-stream. There is no session (no Mcp-Session-Id): every request stands alone.',
      `Tools: ${TOOL_NAMES.join(', ')}. Resources: ${Object.values(RESOURCE_URIS).join(', ')}.`,
      `The response is buffered whole (API Gateway), so progress notifications arrive with a tool's result, and wait_for_job waits at most ${HTTP_MAX_WAIT_SECONDS} s per call; call it again. For live progress, run \`belay mcp\` (stdio) beside the agent.`,
      'Approvals, one-time codes and reviews stay with people unless the deployment lists the tenant in BELAY_MCP_ANSWER_TENANTS.',
    ].join('\n\n'),
    security,
    request: {
      headers: z.object({
        Accept: z.string().meta({ description: 'application/json, text/event-stream' }),
        'MCP-Protocol-Version': z.string().optional(),
      }),
      body: { required: true, content: { 'application/json': { schema: JsonRpcMessage } } },
    },
    responses: {
      200: {
        description:
          'The answer to a request, as a server-sent event stream (progress notifications first, then the result).',
        content: { 'text/event-stream': { schema: z.string() } },
      },
      202: { description: 'A notification or a response from the client: accepted, nothing to answer.' },
      400: error('The body is not JSON, or not a JSON-RPC message the server accepts.'),
      406: { description: 'The Accept header does not name both application/json and text/event-stream.' },
      ...common,
    },
  });
  for (const method of ['get', 'delete'] as const) {
    r.registerPath({
      method,
      path: '/mcp',
      summary: `${method.toUpperCase()} /mcp: not offered (no sessions, no server-initiated stream)`,
      security,
      responses: { 405: error('Use POST.'), ...common },
    });
  }
};
