/**
 * The naive baseline: a plain script that runs `checkout@1`'s steps in ONE process, with its
 * own headless Chromium launched by playwright-core, and keeps nothing anywhere else. When
 * the process dies, whoever runs it starts it again from step one in a new browser, as agent
 * scripts do today (`naive-runner.ts` is that supervisor). There is no approval: the order is
 * placed as soon as step 14 is reached.
 *
 * Standalone: `npx tsx tools/bench/naive.ts --shop http://127.0.0.1:8801 --username
 * shopper01@example.com`. It prints JSON lines on stdout: `browser` (the Chromium pids, so a
 * supervisor can clean up after a crash), `step`, `fault` (it reached the armed fault point and
 * waits to be killed), `done`.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { chromium, type Page } from 'playwright-core';
import { demoCredentials } from '../../demo/accounts.ts';
import { NO_VOLUMES } from '../../lambdas/lib/browser/volumes.ts';
import { createJobFiles, NO_DOWNLOADS } from '../../lambdas/lib/files/job-files.ts';
import type { Evidence } from '../../lambdas/lib/ledger/types.ts';
import type { Logger, Playbook, Step, StepContext } from '../../lambdas/lib/playbooks/contract.ts';
import { memoryStepActions } from '../../lambdas/lib/playbooks/memory-actions.ts';
import { DEFAULT_CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../local/chromium.ts';
import { type CheckoutInputs, checkoutPlaybook } from '../../playbooks/checkout/index.ts';

/** What the naive script reports on stdout, one JSON object a line. */
export type NaiveMessage =
  | { type: 'browser'; pids: number[] }
  | { type: 'step'; index: number; id: string; ms: number; evidence?: unknown }
  | { type: 'model'; usage: number; usd: number }
  | { type: 'fault'; index: number; id: string }
  | { type: 'done'; ms: number; orderEvidence: unknown };

/** The inputs of `demo/jobs/checkout.json`, the job Belay runs too. */
export function checkoutInputs(): CheckoutInputs {
  const url = new URL('../../demo/jobs/checkout.json', import.meta.url);
  const body = JSON.parse(readFileSync(url, 'utf8')) as { inputs: CheckoutInputs };
  return body.inputs;
}

/** A naive runner logs nothing but its JSON lines. */
export const quiet: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** One JSON line on stdout, for the supervisor. */
export function say(message: NaiveMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Pids of this process's Chromium children (playwright starts the browser as our child). */
export function browserChildren(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm.startsWith('chrom')) pids.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Precondition as the engine answers it: restore a wrong page, sign in when signed out. */
export async function prepare<I>(
  playbook: Playbook<I>,
  step: Step<I>,
  page: Page,
  ctx: StepContext<I>,
): Promise<void> {
  for (let attempt = 0; attempt < 4; attempt++) {
    const pre = await step.precondition(page, ctx);
    if (pre.ok) return;
    if (pre.reason === 'wrong_page') await step.restore(page, ctx);
    else if (pre.reason === 'signed_out') {
      const app = playbook.applications[step.app];
      if (!app) throw new Error(`no application ${step.app}`);
      const signedIn = await app.signIn(page, ctx as unknown as StepContext);
      if (signedIn.status !== 'signed_in') throw new Error(`${step.id}: sign-in needs a person`);
    } else throw new Error(`${step.id}: ${pre.reason} (${pre.detail})`);
  }
  throw new Error(`${step.id}: the page never became ready`);
}

/** A naive runner's files: none (it mounts no volume), refused if a step asks. */
export function naiveFiles(jobId: string): StepContext['files'] {
  return createJobFiles({
    volumes: NO_VOLUMES,
    volumeName: 'none',
    tenantId: 'naive',
    jobId,
    downloads: NO_DOWNLOADS,
  });
}

/** Runs the whole checkout once, from step one, in a new browser. */
export async function runNaiveCheckout(options: {
  shopBaseUrl: string;
  username: string;
  jobId: string;
  /** 1-based step whose mid-action point reports `fault` and waits to be killed. */
  crashAtStep?: number;
  /**
   * The Temporal recipe's retry: start at this 1-based step, with the checkpointed evidence of
   * the steps before it (in this new browser, the first step's precondition signs in again and
   * goes to its start page).
   */
  fromStep?: number;
  evidence?: Record<string, Evidence>;
}): Promise<void> {
  const started = performance.now();
  const browser = await chromium.launch({
    executablePath: DEFAULT_CHROMIUM_PATH,
    headless: true,
    args: [...QUIET_CHROMIUM_FLAGS],
  });
  say({ type: 'browser', pids: browserChildren() });
  try {
    const page = await (await browser.newContext()).newPage();
    const inputs = checkoutInputs();
    let evidence: unknown = null;
    const verified = new Map<string, Evidence>(Object.entries(options.evidence ?? {}));
    for (const [index, step] of checkoutPlaybook.steps.entries()) {
      if (index + 1 < (options.fromStep ?? 1)) continue;
      const stepStarted = performance.now();
      const ctx: StepContext<CheckoutInputs> = {
        tenantId: 'naive',
        jobId: options.jobId,
        stepId: step.id,
        idempotencyKey: `${options.jobId}:${step.id}`,
        inputs,
        apps: {
          shop: { baseUrl: options.shopBaseUrl, allowedDomains: [new URL(options.shopBaseUrl).hostname] },
        },
        credentials: { get: async () => demoCredentials('shop', options.username) },
        log: quiet,
        files: naiveFiles(options.jobId),
        faultPoint: async (point) => {
          if (point !== 'mid-action' || options.crashAtStep !== index + 1) return;
          say({ type: 'fault', index, id: step.id });
          await new Promise<never>(() => undefined); // the supervisor SIGKILLs us here
        },
        // A naive runner keeps nothing between runs: only what this run verified.
        evidence: (stepId) => verified.get(stepId),
        actions: memoryStepActions(),
        takeover: async ({ reason }) => {
          throw new Error(`a naive runner has no person to take over (asked: ${reason})`);
        },
      };
      await prepare(checkoutPlaybook, step, page, ctx);
      await step.run(page, ctx);
      evidence = await step.verify(page, ctx);
      if (evidence === null) throw new Error(`${step.id} did not verify`);
      verified.set(step.id, evidence as Evidence);
      say({ type: 'step', index, id: step.id, ms: performance.now() - stepStarted, evidence });
    }
    say({ type: 'done', ms: performance.now() - started, orderEvidence: evidence });
  } finally {
    await browser.close();
  }
}

function stepNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > checkoutPlaybook.steps.length)
    throw new InvalidArgumentError(`a step number from 1 to ${checkoutPlaybook.steps.length}`);
  return n;
}

function evidenceJson(value: string): Record<string, Evidence> {
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, Evidence>;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('a JSON object of evidence by step id');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const opts = new Command()
    .name('naive')
    .description('Run checkout@1 in one process, in its own Chromium (the naive baseline).')
    .requiredOption('--shop <url>', 'base URL of the demo shop')
    .requiredOption('--username <email>', 'shop account to sign in as (a demo account)')
    .option('--job-id <id>', 'job id (idempotency key prefix)', `naive-${Date.now()}`)
    .option('--crash-at-step <n>', 'report "fault" at this step (1-based) mid-action and wait', stepNumber)
    .option('--from-step <n>', 'start at this step (1-based), after the checkpointed ones', stepNumber)
    .option(
      '--evidence <json>',
      "the checkpointed steps' evidence, by step id (with --from-step)",
      evidenceJson,
    )
    .parse()
    .opts<{
      shop: string;
      username: string;
      jobId: string;
      crashAtStep?: number;
      fromStep?: number;
      evidence?: Record<string, Evidence>;
    }>();
  await runNaiveCheckout({
    shopBaseUrl: opts.shop,
    username: opts.username,
    jobId: opts.jobId,
    ...(opts.crashAtStep ? { crashAtStep: opts.crashAtStep } : {}),
    ...(opts.fromStep ? { fromStep: opts.fromStep } : {}),
    ...(opts.evidence ? { evidence: opts.evidence } : {}),
  });
}
