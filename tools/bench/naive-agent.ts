/**
 * The naive agent: runs `crm-records-agent@1`'s fourteen steps in ONE process, with its own
 * headless Chromium, its agent steps asking the local policy (with its simulated latency), or
 * the model `--model` names (configured from the environment as a deployment's is), for
 * every action, and keeps nothing anywhere else: no ledger, no action cache. When the process
 * dies, its supervisor (`naive-runner.ts`) starts it again from step one in a new browser,
 * which asks the model again for every action. It prints the naive runner's JSON lines, and
 * one `model` line for each decision the policy made (before the action runs, so the killed
 * process's calls are counted too).
 *
 * Standalone: `npx tsx tools/bench/naive-agent.ts --crm http://127.0.0.1:8802 --inputs '{...}'`.
 */

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { chromium } from 'playwright-core';
import { demoCredentials } from '../../demo/accounts.ts';
import { DEFAULT_LOCAL_LATENCY_MS, LocalPolicy } from '../../lambdas/lib/agent/local-policy.ts';
import { agentConfigFromEnv, policyFor } from '../../lambdas/lib/agent/models.ts';
import type { ModelCall, Policy } from '../../lambdas/lib/agent/policy.ts';
import { configureAgentModels } from '../../lambdas/lib/agent/registry.ts';
import { modelCallUsd } from '../../lambdas/lib/cost/rates.ts';
import type { Evidence } from '../../lambdas/lib/ledger/types.ts';
import type { StepContext } from '../../lambdas/lib/playbooks/contract.ts';
import { memoryStepActions } from '../../lambdas/lib/playbooks/memory-actions.ts';
import { DEFAULT_CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../local/chromium.ts';
import {
  type CrmRecordsAgentInputs,
  crmRecordsAgentInputSchema,
  crmRecordsAgentPlaybook,
} from '../../playbooks/crm-records-agent/index.ts';
import { browserChildren, naiveFiles, prepare, quiet, say } from './naive.ts';

/** `policy`, saying `model` (tokens and dollars) for every decision and probe answer it makes. */
function countingPolicy(policy: Policy): Policy {
  const count = (d: ModelCall): void =>
    say({ type: 'model', usage: d.tokens.input + d.tokens.output, usd: modelCallUsd(d.model, d.tokens) });
  return {
    spec: policy.spec,
    decide: async (observation) => {
      const d = await policy.decide(observation);
      count(d);
      return d;
    },
    answerProbe: async (observation) => {
      const d = await policy.answerProbe(observation);
      count(d);
      return d;
    },
  };
}

/** Runs the whole job once, from step one, in a new browser. */
export async function runNaiveAgent(options: {
  crmBaseUrl: string;
  username: string;
  jobId: string;
  inputs: CrmRecordsAgentInputs;
  latencyMs: number;
  /** The model every agent step asks (default `local`), as a job's `model` would say. */
  model?: string;
  /** 1-based step whose agent action `crashAtAction` reports `fault` once executed, and waits to be killed. */
  crashAtStep?: number;
  crashAtAction?: number;
}): Promise<void> {
  const started = performance.now();
  const model = options.model ?? 'local';
  const policy = countingPolicy(
    model === 'local'
      ? new LocalPolicy({ latencyMs: options.latencyMs })
      : policyFor(model, agentConfigFromEnv(process.env), 'naive-agent'),
  );
  configureAgentModels(() => policy);
  const browser = await chromium.launch({
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...QUIET_CHROMIUM_FLAGS],
  });
  say({ type: 'browser', pids: browserChildren() });
  try {
    const page = await (await browser.newContext()).newPage();
    const verified: Record<string, Evidence> = {};
    let evidence: Evidence | null = null;
    for (const [index, step] of crmRecordsAgentPlaybook.steps.entries()) {
      const stepStarted = performance.now();
      const ctx: StepContext<CrmRecordsAgentInputs> = {
        tenantId: 'naive',
        jobId: options.jobId,
        stepId: step.id,
        idempotencyKey: `${options.jobId}:${step.id}`,
        inputs: options.inputs,
        apps: {
          crm: { baseUrl: options.crmBaseUrl, allowedDomains: [new URL(options.crmBaseUrl).hostname] },
        },
        credentials: { get: async () => demoCredentials('crm', options.username) },
        log: quiet,
        files: naiveFiles(options.jobId),
        faultPoint: async (point, at) => {
          if (point !== 'action-executed' || options.crashAtStep !== index + 1) return;
          if (at?.action !== (options.crashAtAction ?? 1)) return;
          say({ type: 'fault', index, id: step.id });
          await new Promise<never>(() => undefined); // the supervisor SIGKILLs us here
        },
        evidence: (stepId) => verified[stepId],
        // No ledger and no cache: this step's actions live in this process only.
        actions: memoryStepActions({ evidence: { ...verified } }),
        takeover: async ({ reason }) => {
          throw new Error(`a naive agent has no person to take over (asked: ${reason})`);
        },
      };
      await prepare(crmRecordsAgentPlaybook, step, page, ctx);
      await step.run(page, ctx);
      evidence = await step.verify(page, ctx);
      if (evidence === null) throw new Error(`${step.id} did not verify`);
      verified[step.id] = evidence;
      say({ type: 'step', index, id: step.id, ms: performance.now() - stepStarted, evidence });
    }
    say({ type: 'done', ms: performance.now() - started, orderEvidence: evidence });
  } finally {
    await browser.close();
  }
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a whole number, 0 or more');
  return n;
}

function inputsJson(value: string): CrmRecordsAgentInputs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('a JSON object of crm-records-agent@1 inputs');
  }
  const checked = crmRecordsAgentInputSchema.safeParse(parsed);
  if (!checked.success)
    throw new InvalidArgumentError(
      `not crm-records-agent@1 inputs: ${checked.error.issues.map((i) => i.path.join('.')).join(', ')}`,
    );
  return checked.data;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const opts = new Command()
    .name('naive-agent')
    .description('Run crm-records-agent@1 in one process, in its own Chromium, with no ledger and no cache.')
    .requiredOption('--crm <url>', 'base URL of the demo CRM')
    .option('--username <email>', 'CRM account to sign in as (a demo account)', 'ada@example.com')
    .requiredOption('--inputs <json>', "the job's inputs", inputsJson)
    .option('--job-id <id>', 'job id (idempotency key prefix)', `naive-agent-${Date.now()}`)
    .option(
      '--latency-ms <n>',
      'simulated latency of each local decision',
      positiveInt,
      DEFAULT_LOCAL_LATENCY_MS,
    )
    .option(
      '--model <spec>',
      'model of every agent step (anthropic:<id>, openai:<id>, bedrock:<id>)',
      'local',
    )
    .option('--crash-at-step <n>', 'report "fault" in this step (1-based) and wait', positiveInt)
    .option('--crash-at-action <n>', 'after this action of that step is executed', positiveInt, 1)
    .parse()
    .opts<{
      crm: string;
      username: string;
      inputs: CrmRecordsAgentInputs;
      jobId: string;
      latencyMs: number;
      model: string;
      crashAtStep?: number;
      crashAtAction: number;
    }>();
  await runNaiveAgent({
    crmBaseUrl: opts.crm,
    username: opts.username,
    jobId: opts.jobId,
    inputs: opts.inputs,
    latencyMs: opts.latencyMs,
    model: opts.model,
    ...(opts.crashAtStep ? { crashAtStep: opts.crashAtStep, crashAtAction: opts.crashAtAction } : {}),
  });
}
