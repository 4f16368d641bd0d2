/**
 * The tool and resource tables of the MCP guide (`docs/guides/mcp.md`), generated from the
 * server's own `tools/list` and `resources/templates/list`, so the page cannot drift from the
 * server: `npm run docs:mcp` rewrites them, `npm run docs:mcp -- --check` (and a unit test)
 * fails when they differ.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../lambdas/lib/api/mcp/server.ts';

export const MCP_GUIDE = new URL('../../docs/guides/mcp.md', import.meta.url);
const START = '<!-- generated: mcp-reference (npm run docs:mcp) -->';
const END = '<!-- end: mcp-reference -->';

/** What the server lists, read through an MCP client as any client reads it. */
export async function listedByServer(): Promise<{
  tools: Tool[];
  resources: Resource[];
  templates: ResourceTemplate[];
}> {
  const server = createMcpServer({
    // Listing resources lists the tenant's latest jobs: none here.
    api: async ({ path }) => {
      if (path.startsWith('/jobs?'))
        return { status: 200, contentType: 'application/json', json: { jobs: [] } };
      throw new Error(`listing calls no other route (${path})`);
    },
    wait: { now: Date.now, sleep: async () => undefined, pollMs: 1, maxWaitSeconds: 1 },
    onUnexpectedError: () => undefined,
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'belay-docs', version: '0.0.0' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    const { tools } = await client.listTools();
    const { resources } = await client.listResources();
    const { resourceTemplates } = await client.listResourceTemplates();
    return { tools, resources, templates: resourceTemplates };
  } finally {
    await client.close();
    await server.close();
  }
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function argumentsOf(tool: Tool): string {
  const props = Object.keys(tool.inputSchema.properties ?? {});
  if (props.length === 0) return 'none';
  const required = new Set(tool.inputSchema.required ?? []);
  return props.map((p) => (required.has(p) ? `\`${p}\`` : `\`${p}\`?`)).join(', ');
}

/** The generated part of the guide: the tools and the resources, as tables. */
export function renderReference(listed: Awaited<ReturnType<typeof listedByServer>>): string {
  const lines = [
    START,
    '',
    '| Tool | Arguments (`?` = optional) | What it does and returns |',
    '|---|---|---|',
    ...listed.tools.map((t) => `| \`${t.name}\` | ${argumentsOf(t)} | ${cell(t.description ?? '')} |`),
    '',
    '| Resource | Type | What it holds |',
    '|---|---|---|',
    ...listed.resources.map((r) => `| \`${r.uri}\` | ${r.mimeType ?? ''} | ${cell(r.description ?? '')} |`),
    ...listed.templates.map(
      (r) => `| \`${r.uriTemplate}\` | ${r.mimeType ?? ''} | ${cell(r.description ?? '')} |`,
    ),
    '',
    END,
  ];
  return lines.join('\n');
}

/** The page with its generated part replaced by `reference`. */
export function withReference(page: string, reference: string): string {
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/guides/mcp.md lacks the markers ${START} ... ${END}`);
  return page.slice(0, from) + reference + page.slice(to + END.length);
}

async function main(argv: string[]): Promise<number> {
  const page = await readFile(MCP_GUIDE, 'utf8');
  const updated = withReference(page, renderReference(await listedByServer()));
  if (argv.includes('--check')) {
    if (updated === page) return 0;
    process.stderr.write('docs/guides/mcp.md is out of date with the MCP server: run npm run docs:mcp\n');
    return 1;
  }
  if (updated !== page) await writeFile(MCP_GUIDE, updated);
  process.stderr.write(
    updated === page ? 'docs/guides/mcp.md is up to date\n' : 'docs/guides/mcp.md updated\n',
  );
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
