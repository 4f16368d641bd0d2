import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Command } from 'commander';
import { MAX_WAIT_SECONDS, WAIT_POLL_MS } from '../../../lambdas/lib/api/mcp/limits.ts';
import { abortableSleep, createMcpServer } from '../../../lambdas/lib/api/mcp/server.ts';
import type { Target } from './config.ts';
import type { Io } from './io.ts';
import { httpApi } from './mcp-api.ts';

/** What `belay mcp` needs from the command line: where Belay is, with the key, and where errors go. */
export interface McpCommandContext {
  io: Io;
  /** The URL and key, as every command resolves them (`--url`/`--key`, `BELAY_URL`/`BELAY_KEY`, `belay login`). */
  target(): Promise<Target & { key: string }>;
}

/**
 * `belay mcp`: Belay's MCP server on standard input and output, for an agent runtime that
 * starts it as a subprocess (Claude Desktop, Claude Code, the OpenAI Agents SDK, LangGraph's MCP
 * adapters...). Its tools call the HTTP API with the configured key, so the tenant, the roles
 * and every rule are the API's. It runs until its input ends; only MCP messages go to standard
 * output, anything else to standard error.
 */
export function registerMcp(program: Command, ctx: McpCommandContext): void {
  program
    .command('mcp')
    .description(
      'serve Belay to an agent runtime over MCP (stdio): submit, follow and read jobs with the configured URL and key; answers on standard output, runs until its input ends',
    )
    .action(async () => {
      const { url, key } = await ctx.target();
      const server = createMcpServer({
        api: httpApi(url, key),
        wait: {
          now: Date.now,
          sleep: abortableSleep,
          pollMs: WAIT_POLL_MS,
          maxWaitSeconds: MAX_WAIT_SECONDS,
        },
        onUnexpectedError: (err) => ctx.io.err(`belay mcp: ${(err as Error)?.stack ?? String(err)}`),
      });
      const transport = new StdioServerTransport();
      const ended = new Promise<void>((resolve) => {
        process.stdin.once('end', resolve);
        process.stdin.once('close', resolve);
      });
      await server.connect(transport);
      ctx.io.err(`belay mcp: serving ${url} over stdio`);
      await ended;
      await server.close();
    });
}
