import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { killQuietly, waitForExit } from '../../support/processes.ts';

/**
 * MCP clients of the official SDK, as an agent runtime connects them: over Streamable HTTP to
 * the API's `/mcp` with a bearer key, or over stdio to `belay mcp` started as a subprocess
 * (`node tools/cli/bin/belay.js mcp`, what `npx belay mcp` runs) with the URL and key in its
 * environment. `close` ends the subprocess and checks, by its PID, that it is gone.
 */

export type Transport = 'http' | 'stdio';
export const TRANSPORTS: readonly Transport[] = ['http', 'stdio'];

export interface McpConnection {
  client: Client;
  /** The stdio server's PID (undefined over HTTP). */
  pid: number | undefined;
  /** What the stdio server wrote to standard error. */
  stderr(): string;
  close(): Promise<void>;
}

export async function connect(transport: Transport, apiUrl: string, key: string): Promise<McpConnection> {
  const client = new Client({ name: 'belay-test-agent', version: '1.0.0' });
  if (transport === 'http') {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return { client, pid: undefined, stderr: () => '', close: () => client.close() };
  }
  const home = await mkdtemp(join(tmpdir(), 'belay-mcp-'));
  const stdio = new StdioClientTransport({
    command: process.execPath,
    args: ['tools/cli/bin/belay.js', 'mcp'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: home,
      BELAY_URL: apiUrl,
      BELAY_KEY: key,
    },
    stderr: 'pipe',
  });
  let err = '';
  stdio.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  await client.connect(stdio);
  const pid = stdio.pid ?? undefined;
  return {
    client,
    pid,
    stderr: () => err,
    async close() {
      await client.close();
      await rm(home, { recursive: true, force: true });
      // The transport ends the process; make sure, by its PID, that nothing is left running.
      if (pid === undefined) return;
      const left = await waitForExit([pid]);
      if (left.length > 0) {
        killQuietly(pid);
        throw new Error(`belay mcp (pid ${pid}) was still running after its client closed`);
      }
    },
  };
}

/** A tool's structured result (its `structuredContent`), after checking it is not an error. */
export function structured(result: unknown): Record<string, unknown> {
  const r = result as CallToolResult;
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
  return r.structuredContent as Record<string, unknown>;
}

/** A tool error's text and the API's error it carries; throws when the call succeeded. */
export function toolError(result: unknown): { text: string; status: number; code: string } {
  const r = result as CallToolResult;
  if (!r.isError) throw new Error(`expected a tool error, got ${JSON.stringify(r.structuredContent)}`);
  const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  const error = (r.structuredContent as { error?: { status?: number; code?: string } } | undefined)?.error;
  return { text, status: error?.status ?? 0, code: error?.code ?? '' };
}
