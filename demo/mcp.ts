/**
 * `npm run demo -- --mcp [--mcp-transport stdio|http] [--json]`: an agent runtime's side of
 * Belay, through MCP, on the local stack. The agent (an MCP client of the official SDK, with a
 * submitter-only key) reads the catalogue, submits checkout@1, disconnects (the job goes on
 * without it), connects again later, follows the job with a progress notification per step,
 * finds it waiting for a person's approval and says so; the demo's person approves through the
 * API with their own key; the agent's next wait returns the verified result: the order's
 * evidence, a screenshot, the cost. Over stdio the agent starts `belay mcp` as its subprocess,
 * as Claude Desktop or Claude Code would; over http it talks to the API's `/mcp`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApiKeyStore } from '../lambdas/lib/auth/api-keys.ts';
import { idempotencyKeyOf } from '../lambdas/lib/engine/job-identity.ts';
import { type LocalStack, startLocalStack } from '../local/stack.ts';
import { apiClient } from './api-client.ts';
import { siteAdmin } from './sites/admin-client.ts';

export type McpTransport = 'stdio' | 'http';

export interface McpDemoSummary {
  jobId: string;
  transport: McpTransport;
  status: string;
  ordersPlaced: number;
  /** Progress notifications the agent received (one per step completed). */
  progressNotifications: number;
  /** The agent's connections: one to hand the job off, one to pick it up. */
  connections: number;
  evidence: Record<string, unknown>;
  costUsd: number;
  wallMs: number;
}

type Say = (line: string) => void;

/** An MCP client as the agent runtime holds one, on the chosen transport, with the agent's key. */
async function agentClient(transport: McpTransport, apiUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'demo-agent', version: '1.0.0' });
  if (transport === 'http') {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
  } else {
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['tools/cli/bin/belay.js', 'mcp'],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          BELAY_URL: apiUrl,
          BELAY_KEY: key,
        },
        stderr: 'ignore',
      }),
    );
  }
  return client;
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n');
}

function result(out: unknown): Record<string, unknown> {
  const r = out as CallToolResult;
  if (r.isError)
    throw new Error(`the tool failed: ${r.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ')}`);
  return r.structuredContent as Record<string, unknown>;
}

/** wait_for_job until it returns for another reason than its timeout (over HTTP, one call waits at most 20 s). */
async function follow(
  client: Client,
  jobId: string,
  say: Say,
  clock: () => string,
  deadline: number,
): Promise<Record<string, unknown>> {
  let notifications = 0;
  for (;;) {
    const out = result(
      await client.callTool({ name: 'wait_for_job', arguments: { jobId, timeoutSeconds: 120 } }, undefined, {
        timeout: 180_000,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          notifications += 1;
          say(`[${clock()}] progress ${p.progress}/${p.total}: ${p.message}`);
        },
      }),
    );
    if (out.outcome !== 'timed_out') return { ...out, notifications };
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not get anywhere before the demo's timeout`);
    say(`[${clock()}] wait_for_job returned at its timeout (the job goes on); the agent calls it again`);
  }
}

export async function runMcpDemo(options: {
  transport: McpTransport;
  json: boolean;
  timeoutSeconds: number;
}): Promise<McpDemoSummary> {
  const say: Say = options.json ? () => undefined : (line) => console.log(line);
  const started = Date.now();
  const deadline = started + options.timeoutSeconds * 1000;
  const clock = (): string => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;
  const jobId = `demo-mcp-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  say(`Belay demo: an agent hands off checkout@1 over MCP (${options.transport}) and picks it up later`);
  const stack: LocalStack = await startLocalStack({
    dataDir: join('.local', 'demo-mcp'),
    fresh: true,
    ports: { anchor: 0, shop: 0, crm: 0, billing: 0 },
    apiPort: 0,
    resume: false,
    log: (line) => say(`  ${line}`),
  });
  try {
    const apiUrl = stack.apiUrl as string;
    // The agent's own key: it may submit and read, never approve.
    const agentKey = (
      await createApiKeyStore({ doc: stack.doc, tableName: stack.tableName }).create(
        stack.demoTenant,
        ['submitter'],
        {
          label: 'demo agent',
        },
      )
    ).apiKey;
    say(
      options.transport === 'stdio'
        ? `  the agent starts \`belay mcp\` (stdio) with BELAY_URL=${apiUrl} and its submitter-only key`
        : `  the agent connects to ${apiUrl}/mcp (Streamable HTTP) with its submitter-only key`,
    );

    // 1. Hand off.
    let client = await agentClient(options.transport, apiUrl, agentKey);
    const { playbooks } = result(await client.callTool({ name: 'list_playbooks', arguments: {} })) as {
      playbooks: { id: string; steps: number; writes: string[]; approvals: string[] }[];
    };
    const checkout = playbooks.find((p) => p.id === 'checkout@1');
    say(
      `[${clock()}] list_playbooks: ${playbooks.map((p) => p.id).join(', ')}; checkout@1 has ${checkout?.steps} steps, writes at ${checkout?.writes.join(', ')}, a person approves ${checkout?.approvals.join(', ')}`,
    );
    const body = JSON.parse(readFileSync(new URL('./jobs/checkout.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const submitted = result(await client.callTool({ name: 'submit_job', arguments: { ...body, jobId } }));
    say(
      `[${clock()}] submit_job: ${jobId} created=${String(submitted.created)}; the agent disconnects and does other work`,
    );
    await client.close();
    await new Promise((r) => setTimeout(r, 3_000));

    // 2. Pick it up again, in a new connection (a new `belay mcp` process over stdio).
    client = await agentClient(options.transport, apiUrl, agentKey);
    say(`[${clock()}] the agent comes back: wait_for_job ${jobId}`);
    const waiting = await follow(client, jobId, say, clock, deadline);
    let notifications = Number(waiting.notifications);
    const job = waiting.job as {
      status: string;
      wait?: { kind: string; step: string; answeredBy?: { by: string } };
    };
    say(
      `[${clock()}] ${String(waiting.outcome)}: ${job.status}, ${job.wait?.kind} at ${job.wait?.step}; answered by ${job.wait?.answeredBy?.by}`,
    );
    say(
      `  what the agent sees (wait_for_job's job):\n${indent(JSON.stringify(waiting.job, null, 2), '    ')}`,
    );
    if (job.status === 'WAITING_APPROVAL' && job.wait) {
      say(
        `[${clock()}] the agent tells its user; a person approves through the API (POST /jobs/${jobId}/decisions)`,
      );
      const person = apiClient(apiUrl, stack.demoApiKey);
      const approved = await person('POST', `/jobs/${jobId}/decisions`, {
        step: job.wait.step,
        decision: 'approve',
        comment: 'checked the basket',
      });
      if (approved.status !== 200) throw new Error(`approval refused: HTTP ${approved.status}`);
    }
    const done = await follow(client, jobId, say, clock, deadline);
    notifications += Number(done.notifications);
    const final = done.job as {
      status: string;
      evidence?: Record<string, unknown>;
      screenshots?: { uri: string }[];
      cost: { usd: number; usdOfPeople: number; browserSeconds: number };
    };
    say(`[${clock()}] ${String(done.outcome)}: ${final.status}`);
    say(`  evidence of place-order: ${JSON.stringify(final.evidence?.['place-order'])}`);
    const shot = final.screenshots?.at(-1);
    if (shot) {
      const image = await client.readResource({ uri: shot.uri });
      const blob = (image.contents[0] as { blob?: string }).blob ?? '';
      say(`  screenshot ${shot.uri}: ${Buffer.from(blob, 'base64').byteLength} bytes of image/jpeg`);
    }
    say(
      `  cost: $${final.cost.usd.toFixed(4)}, of which $${final.cost.usdOfPeople.toFixed(2)} is the estimate of people's time (browser ${final.cost.browserSeconds} s)`,
    );
    await client.close();

    const writes = await siteAdmin(stack.sites.shop.baseUrl, stack.sites.adminToken).writes();
    const stored = await stack.ledger.getJob(stack.demoTenant, jobId);
    const ordersPlaced = writes.countsByKey[idempotencyKeyOf(stored, 'place-order')] ?? 0;
    say(`  orders placed: ${ordersPlaced} (the shop's own record)`);
    return {
      jobId,
      transport: options.transport,
      status: final.status,
      ordersPlaced,
      progressNotifications: notifications,
      connections: 2,
      evidence: final.evidence ?? {},
      costUsd: final.cost.usd,
      wallMs: Date.now() - started,
    };
  } finally {
    await stack.stop({ endSessions: true });
  }
}
