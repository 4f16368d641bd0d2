import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BelayApi } from './api.ts';
import { registerResources } from './resources.ts';
import { registerTools, type ToolDeps } from './tools.ts';

/** The server's name and version in `initialize` (the package's version). */
export const MCP_SERVER_INFO = { name: 'belay', version: '0.1.0' } as const;

/** What the server tells an agent about itself (MCP `instructions`). */
export const MCP_INSTRUCTIONS = [
  'Belay runs durable browser jobs for you: submit_job hands over the work (name@version of a playbook, its inputs, the accounts to act as), and the job goes on without you, surviving crashes and this conversation.',
  'Follow it with wait_for_job (progress per step; it returns when the job ends or waits for a person, or at your timeout) or get_job, now or in a later conversation: keep the jobId.',
  'Approvals, one-time codes and reviews are for people; tell your user what the job waits for (get_job says who may answer and how). Answer only a question an agent step asked you (answer_question).',
  'Timelines and screenshots are resources: belay://jobs/{jobId}/timeline, belay://jobs/{jobId}/screenshots/{name}.',
].join('\n');

export interface McpServerOptions extends ToolDeps {
  api: BelayApi;
}

/**
 * Belay's MCP server for one client: the tools and resources over `api`, the HTTP API as the
 * client's key. A new one per client session (stdio) or per request (Streamable HTTP, stateless).
 *
 * @example
 * const server = createMcpServer({ api, wait: { now: Date.now, sleep, pollMs: 1000, maxWaitSeconds: 3600 }, onUnexpectedError: console.error });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(options: McpServerOptions): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    instructions: MCP_INSTRUCTIONS,
  });
  registerTools(server, options);
  registerResources(server, options.api);
  return server;
}

/** A pause that ends early when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
