/**
 * `npm run demo -- --agent [--crash-at N] [--json]`: runs `crm-contact-agent@1` on the local
 * stack through the HTTP API: an agent step (the local rule-based policy, 1.5 s of simulated
 * model latency per decision) fills and saves a CRM customer's edit form. With `--crash-at N`
 * the step worker is SIGKILLed right after the agent's N-th action is recorded in the ledger
 * (before it runs); the job resumes mid-step, replaying the recorded actions with no model call.
 * The committed writes come from the CRM's own server-side record.
 */
import { join } from 'node:path';
import type { LedgerEntry } from '../lambdas/lib/ledger/types.ts';
import { localFunctionArn, startLocalStack } from '../local/stack.ts';
import { apiClient } from './api-client.ts';
import { siteAdmin } from './sites/admin-client.ts';

/** Decisions the local policy makes for the demo's form: two fills, the save, done. */
export const AGENT_ACTIONS = 4;

export interface AgentDemoSummary {
  jobId: string;
  status: string;
  /** CRM changes committed (the CRM's own record): 1 when the write discipline held. */
  writesCommitted: number;
  /** Model calls (agent decisions: chosen, healed, refused entries) per step. */
  modelCallsPerStep: Record<string, number>;
  /** Actions the model was asked for again although one was recorded for them: 0 when replay held. */
  repeatedModelCalls: number;
  crashes: number;
  /** The local policy's latency is simulated (per decision). */
  simulatedModelLatencyMs: number;
  wallMs: number;
}

const DECISIONS = new Set(['action-chosen', 'action-healed', 'action-refused']);

export async function runAgentDemo(options: {
  crashAt?: number;
  json: boolean;
  timeoutSeconds: number;
}): Promise<AgentDemoSummary> {
  const say = options.json ? (): void => undefined : (line: string): void => console.log(line);
  const started = Date.now();
  const clock = (): string => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s`;
  const jobId = `demo-agent-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  const latencyMs = 1_500;
  say('Belay demo: crm-contact-agent@1 (an agent step, model: local) on the local stack');
  const stack = await startLocalStack({
    dataDir: join('.local', 'demo-agent'),
    fresh: true,
    ports: { anchor: 0, shop: 0, crm: 0, billing: 0 },
    apiPort: 0,
    resume: false,
    env: { BELAY_AGENT_LOCAL_LATENCY_MS: String(latencyMs) },
    log: (line) => say(`  ${line}`),
  });
  let crashes = 0;
  stack.lambdas.events.on('fault-point', (e) => {
    if (e.info.jobId !== jobId) return;
    if (e.point === 'action-recorded')
      say(`[${clock()}] action ${e.info.action} recorded in the ledger (worker pid ${e.pid})`);
    if (e.point === 'action-executed') say(`[${clock()}] action ${e.info.action} executed`);
  });
  stack.lambdas.events.on('fault-fired', (e) => {
    crashes += 1;
    say(
      `[${clock()}] CRASH: the step worker (pid ${e.pid}) was SIGKILLed after action ${e.info.action} was recorded`,
    );
    say(`[${clock()}]        the new worker replays the recorded actions with no model call`);
  });
  try {
    const api = apiClient(stack.apiUrl as string, stack.demoApiKey);
    if (options.crashAt) {
      stack.lambdas.arm({
        functionName: localFunctionArn('RunStep'),
        point: 'action-recorded',
        match: { jobId, stepIndex: 1, action: options.crashAt },
      });
      say(`  armed: SIGKILL the step worker after the agent's action ${options.crashAt} is recorded`);
    }
    const submitted = await api('POST', '/jobs', {
      jobId,
      playbook: 'crm-contact-agent@1',
      inputs: { customerId: 'C-1003', contactName: 'Mei Chen-Ward', phone: '+44 117 496 0999' },
      accounts: { crm: 'acct_demo_crm' },
      model: 'local',
    });
    say(`[${clock()}] submitted job ${jobId}: HTTP ${submitted.status}`);
    const deadline = Date.now() + options.timeoutSeconds * 1000;
    let job: Record<string, unknown> | undefined;
    while (Date.now() < deadline) {
      job = (await api('GET', `/jobs/${jobId}`)).body.job as Record<string, unknown>;
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(String(job?.status))) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const entries = ((await api('GET', `/jobs/${jobId}/ledger`)).body.entries ?? []) as LedgerEntry[];
    const calls: Record<string, number> = {};
    const seen = new Map<string, number>();
    for (const e of entries) {
      if (!DECISIONS.has(e.type) || !e.step) continue;
      calls[e.step] = (calls[e.step] ?? 0) + 1;
      if (e.type === 'action-chosen') {
        const key = `${e.step}#${String(e.detail?.n)}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }
    const writes = await siteAdmin(stack.sites.crm.baseUrl, stack.sites.adminToken).writes();
    const summary: AgentDemoSummary = {
      jobId,
      status: String(job?.status ?? 'UNKNOWN'),
      writesCommitted: writes.count,
      modelCallsPerStep: calls,
      repeatedModelCalls: [...seen.values()].reduce((a, n) => a + (n - 1), 0),
      crashes,
      simulatedModelLatencyMs: latencyMs,
      wallMs: Date.now() - started,
    };
    if (!options.json) {
      console.log('\nAgent decisions (ledger):');
      for (const e of entries.filter((x) => DECISIONS.has(x.type))) {
        console.log(
          `  ${e.type.padEnd(15)} #${String(e.detail?.n)} ${String(e.detail?.describe)} (model ${String(e.detail?.model)}, attempt ${e.attempt ?? '-'})`,
        );
      }
      console.log(`\nSummary\n${JSON.stringify(summary, null, 2)}`);
    }
    return summary;
  } finally {
    await stack.stop({ endSessions: true });
  }
}
