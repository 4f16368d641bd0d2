import { MethodNotAllowedError } from '../errors.ts';
import { ANY_ROLE, type Route } from '../route.ts';

/**
 * The MCP endpoint (Streamable HTTP, stateless): `POST /mcp` carries the JSON-RPC messages,
 * authenticated like every route (the key's tenant and roles; the tools then need the roles
 * of the routes they call). There is no session, so no server-sent stream to open (`GET`) and
 * none to end (`DELETE`): both are 405, as the transport's specification asks.
 */
export const MCP_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/mcp',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      // Loaded on first use: the other routes' cold starts do not pay for the MCP SDK.
      const { answerMcpRequest } = await import('./http.ts');
      return answerMcpRequest(req);
    },
  },
  ...(['GET', 'DELETE'] as const).map(
    (method): Route => ({
      method,
      path: '/mcp',
      auth: true,
      roles: ANY_ROLE,
      async handle() {
        throw new MethodNotAllowedError(method, ['POST']);
      },
    }),
  ),
];
