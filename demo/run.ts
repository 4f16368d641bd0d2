/**
 * `npm run demo [-- --crash-at N] [--json]` (`--agent`: an agent step; `--mcp`: an agent runtime
 * through MCP, see `mcp.ts`): starts the local stack, submits `checkout@1`
 * through the HTTP API as the demo tenant, shows its progress live, approves the review step
 * as the demo approver, and prints a timeline and a summary. With `--crash-at N` the step
 * worker is SIGKILLed in the middle of step N; the job resumes at step N in the same browser
 * session. The orders count comes from the shop's own server-side record.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { idempotencyKeyOf } from '../lambdas/lib/engine/job-identity.ts';
import type { LedgerEntry } from '../lambdas/lib/ledger/types.ts';
import { createProgressTracker } from '../local/progress.ts';
import { localFunctionArn, startLocalStack } from '../local/stack.ts';
import { checkoutPlaybook } from '../playbooks/checkout/index.ts';
import { AGENT_ACTIONS, runAgentDemo } from './agent.ts';
import { apiClient } from './api-client.ts';
import { type McpTransport, runMcpDemo } from './mcp.ts';
import { siteAdmin } from './sites/admin-client.ts';

interface DemoOptions {
  /** Run crm-contact-agent@1 (an agent step) instead; `crashAt` is then an action number. */
  agent: boolean;
  /** Hand checkout@1 off through MCP instead, on this transport. */
  mcp?: McpTransport;
  crashAt?: number;
  json: boolean;
  timeoutSeconds: number;
}

export interface DemoSummary {
  jobId: string;
  status: string;
  ordersPlaced: number;
  steps: { id: string; attempts: number; executions: number }[];
  crashes: number;
  wallMs: number;
}

const playbook = checkoutPlaybook;
const STEPS = playbook.steps.length;

function parseArgs(argv: string[]): DemoOptions {
  const program = new Command()
    .name('npm run demo --')
    .description('Run checkout@1 end to end on the local stack.')
    .option(
      '--agent',
      `run crm-contact-agent@1: an agent step, model local (--crash-at 1-${AGENT_ACTIONS}: after that action is recorded)`,
      false,
    )
    .option('--mcp', 'an agent runtime hands checkout@1 off through MCP and picks it up later', false)
    .option(
      '--mcp-transport <transport>',
      "with --mcp: stdio (`belay mcp`) or http (the API's /mcp)",
      (v) => {
        if (v !== 'stdio' && v !== 'http') throw new InvalidArgumentError('stdio or http');
        return v;
      },
    )
    .option('--crash-at <step>', `SIGKILL the step worker in the middle of step N (1-${STEPS})`, (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > STEPS)
        throw new InvalidArgumentError(`a step number from 1 to ${STEPS}`);
      return n;
    })
    .option('--json', 'print only the summary, as JSON', false)
    .option('--timeout <seconds>', 'give up after this long', (v) => Number(v), 300)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  program.parse(argv, { from: 'user' });
  const o = program.opts<{
    agent: boolean;
    mcp: boolean;
    mcpTransport?: McpTransport;
    crashAt?: number;
    json: boolean;
    timeout: number;
  }>();
  if (o.agent && o.crashAt !== undefined && o.crashAt > AGENT_ACTIONS)
    throw new InvalidArgumentError(`with --agent, an action number from 1 to ${AGENT_ACTIONS}`);
  if (o.mcp && (o.agent || o.crashAt !== undefined))
    program.error('error: --mcp runs on its own: leave out --agent and --crash-at');
  return {
    agent: o.agent,
    ...(o.mcp ? { mcp: o.mcpTransport ?? 'stdio' } : {}),
    crashAt: o.crashAt,
    json: o.json,
    timeoutSeconds: o.timeout,
  };
}

export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const say = options.json ? (): void => undefined : (line: string): void => console.log(line);
  const started = Date.now();
  const clock = (): string => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;
  const track = createProgressTracker();
  const jobId = `demo-checkout-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;

  say('Belay demo: checkout@1 (14 steps) on the local stack');
  // The execution goes on a moment after the job's status is final (Finish ends the browser
  // session and gives the lease back): the demo waits for it before it stops the stack.
  let executionEnded: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    executionEnded = resolve;
  });
  const stack = await startLocalStack({
    dataDir: join('.local', 'demo'),
    fresh: true,
    ports: { anchor: 0, shop: 0, crm: 0, billing: 0 },
    apiPort: 0,
    resume: false,
    log: (line) => say(`  ${line}`),
    onHistoryEvent: (event) => {
      const line = track(event);
      if (!line || line.jobId !== jobId) return;
      say(`[${clock()}] ${line.text}`);
      if (line.kind === 'finished' || line.kind === 'failed') executionEnded();
    },
  });
  const executions = new Map<string, number>();
  let crashes = 0;
  stack.lambdas.events.on('fault-point', (e) => {
    if (e.point !== 'before-action' || e.info.jobId !== jobId || !e.info.step) return;
    executions.set(e.info.step, (executions.get(e.info.step) ?? 0) + 1);
    const index = playbook.steps.findIndex((s) => s.id === e.info.step);
    say(
      `[${clock()}] step ${index + 1}/${STEPS} ${playbook.steps[index]?.title ?? e.info.step} (worker pid ${e.pid})`,
    );
  });
  stack.lambdas.events.on('fault-fired', (e) => {
    crashes += 1;
    say(
      `[${clock()}] CRASH: the step worker (pid ${e.pid}) was SIGKILLed ${e.point} in step ${Number(e.info.stepIndex) + 1}`,
    );
    say(
      `[${clock()}]        Step Functions retries the task; the new worker reattaches to the same browser session`,
    );
  });

  try {
    const api = apiClient(stack.apiUrl as string, stack.demoApiKey);
    say(`  API ${stack.apiUrl}, shop ${stack.sites.shop.baseUrl}, browser service ${stack.anchor.baseUrl}`);
    say(
      `  console ${stack.apiUrl}/console/jobs/${jobId} while the demo runs (sign in with the key in ${stack.dataDir}/demo-api-key)`,
    );
    if (options.crashAt) {
      stack.lambdas.arm({
        functionName: localFunctionArn('RunStep'),
        point: 'mid-action',
        match: { jobId, stepIndex: options.crashAt - 1 },
      });
      say(`  armed: SIGKILL the step worker mid-action in step ${options.crashAt}`);
    }
    const body = JSON.parse(readFileSync(new URL('./jobs/checkout.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const submitted = await api('POST', '/jobs', { ...body, jobId });
    say(`[${clock()}] submitted job ${jobId}: HTTP ${submitted.status}`);

    const deadline = Date.now() + options.timeoutSeconds * 1000;
    let job = submitted.body.job as Record<string, unknown> | undefined;
    const approved = new Set<string>();
    while (Date.now() < deadline) {
      job = (await api('GET', `/jobs/${jobId}`)).body.job as Record<string, unknown>;
      const status = String(job?.status);
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status)) break;
      const wait = job?.wait as { kind?: string; step?: string } | undefined;
      if (status === 'WAITING_APPROVAL' && wait?.step && !approved.has(wait.step)) {
        approved.add(wait.step);
        say(`[${clock()}] approving "${wait.step}" as the demo approver (POST /jobs/${jobId}/decisions)`);
        const res = await api('POST', `/jobs/${jobId}/decisions`, {
          step: wait.step,
          decision: 'approve',
          comment: 'demo',
        });
        if (res.status >= 300)
          throw new Error(`approval refused: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }

    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(String(job?.status))) {
      // Bounded; the timer must not keep the process alive once the execution has ended.
      await Promise.race([ended, new Promise((r) => setTimeout(r, 30_000).unref())]);
    }
    const ledger = (await api('GET', `/jobs/${jobId}/ledger`)).body as { entries?: LedgerEntry[] };
    const entries = ledger.entries ?? [];
    const writes = await siteAdmin(stack.sites.shop.baseUrl, stack.sites.adminToken).writes();
    const summary: DemoSummary = {
      jobId,
      status: String(job?.status ?? 'UNKNOWN'),
      ordersPlaced:
        writes.countsByKey[
          idempotencyKeyOf(
            { tenantId: stack.demoTenant, jobId, createdAt: String(job?.createdAt ?? '') },
            'place-order',
          )
        ] ?? 0,
      steps: playbook.steps.map((s) => ({
        id: s.id,
        attempts: Math.max(1, entries.filter((e) => e.step === s.id && e.type === 'step-started').length),
        executions: executions.get(s.id) ?? 0,
      })),
      crashes,
      wallMs: Date.now() - started,
    };
    if (!options.json) printTimeline(entries, summary);
    return summary;
  } finally {
    await stack.stop({ endSessions: true });
  }
}

function printTimeline(entries: LedgerEntry[], summary: DemoSummary): void {
  const t0 = Date.parse(entries[0]?.at ?? new Date().toISOString());
  console.log('\nLedger (the audit trail, as GET /jobs/{id}/ledger returns it):');
  for (const e of entries) {
    const dt = ((Date.parse(e.at) - t0) / 1000).toFixed(1).padStart(5);
    const what = e.evidence ? JSON.stringify(e.evidence) : e.detail ? JSON.stringify(e.detail) : '';
    console.log(`  +${dt}s  ${e.type.padEnd(18)} ${(e.step ?? '').padEnd(16)} ${what.slice(0, 90)}`);
  }
  console.log('\nSummary');
  console.log(`  job            ${summary.jobId}`);
  console.log(`  status         ${summary.status}`);
  console.log(`  orders placed  ${summary.ordersPlaced} (the shop's own record)`);
  console.log(`  crashes        ${summary.crashes}`);
  console.log(`  wall time      ${(summary.wallMs / 1000).toFixed(1)} s`);
  const again = summary.steps.filter((s) => s.executions > 1).map((s) => `${s.id} x${s.executions}`);
  console.log(`  steps run more than once: ${again.length ? again.join(', ') : 'none'}`);
}

async function main(): Promise<void> {
  let options: DemoOptions;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.exitCode = (err as { exitCode?: number }).exitCode ?? 2;
    return;
  }
  if (options.mcp) {
    const mcp = await runMcpDemo({
      transport: options.mcp,
      json: options.json,
      timeoutSeconds: options.timeoutSeconds,
    });
    if (options.json) console.log(JSON.stringify(mcp, null, 2));
    process.exitCode = mcp.status === 'SUCCEEDED' && mcp.ordersPlaced === 1 ? 0 : 1;
    return;
  }
  if (options.agent) {
    const agent = await runAgentDemo(options);
    if (options.json) console.log(JSON.stringify(agent, null, 2));
    const held =
      agent.status === 'SUCCEEDED' && agent.writesCommitted === 1 && agent.repeatedModelCalls === 0;
    process.exitCode = held ? 0 : 1;
    return;
  }
  const summary = await runDemo(options);
  if (options.json) console.log(JSON.stringify(summary, null, 2));
  const ok = summary.status === 'SUCCEEDED' && summary.ordersPlaced === 1;
  process.exitCode = ok ? 0 : 1;
}

await main();
