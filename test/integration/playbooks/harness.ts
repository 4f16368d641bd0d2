/**
 * Drives playbook steps the way the engine does, without the engine: precondition (restore on
 * `wrong_page`, sign in on `signed_out`), run, verify. Builds the StepContext with demo
 * credentials, a logger that keeps entries in memory, and a no-op fault point.
 */

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { expect } from 'vitest';
import type { DemoSiteName } from '../../../demo/accounts.ts';
import { demoCredentials } from '../../../demo/accounts.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { NO_VOLUMES } from '../../../lambdas/lib/browser/volumes.ts';
import { idempotencyKeyOf } from '../../../lambdas/lib/engine/job-identity.ts';
import { createJobFiles, NO_DOWNLOADS } from '../../../lambdas/lib/files/job-files.ts';
import type { Evidence } from '../../../lambdas/lib/ledger/types.ts';
import type {
  Logger,
  Playbook,
  PreconditionResult,
  Step,
  StepContext,
} from '../../../lambdas/lib/playbooks/contract.ts';
import { memoryStepActions } from '../../../lambdas/lib/playbooks/memory-actions.ts';
import { DEFAULT_CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../../local/chromium.ts';
import { SiteClient } from '../sites/http-client.ts';

/** Debian's Chromium, quiet and offline, as the local stack launches it (local/chromium.ts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: DEFAULT_CHROMIUM_PATH, args: [...QUIET_CHROMIUM_FLAGS] });
}

export interface LogEntry {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that writes nothing to the console and keeps what it was given. */
export function memoryLogger(entries: LogEntry[]): Logger {
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      entries.push({ level, message, ...(fields ? { fields } : {}) });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export interface Job<I> {
  jobId: string;
  /** When the job was created: with its tenant and id, what its idempotency keys are made of. */
  createdAt: string;
  inputs: I;
  /** application -> demo username */
  accounts: Partial<Record<DemoSiteName, string>>;
  sites: StartedSites;
  log: LogEntry[];
  /** What each step verified, as the ledger would give it to later steps (`ctx.evidence`). */
  evidence: Record<string, Evidence>;
}

export function newJob<I>(sites: StartedSites, inputs: I, accounts: Job<I>['accounts']): Job<I> {
  return {
    jobId: `job-${Math.random().toString(36).slice(2, 10)}`,
    createdAt: new Date().toISOString(),
    inputs,
    accounts,
    sites,
    log: [],
    evidence: {},
  };
}

const TENANT = 'tenant-test';

/** The idempotency key the engine gives `step` of `job` (the key the sites record). */
export function keyOf<I>(job: Job<I>, stepId: string): string {
  return idempotencyKeyOf({ tenantId: TENANT, jobId: job.jobId, createdAt: job.createdAt }, stepId);
}

/** The StepContext the engine would build for `step` of `job`. */
export function contextFor<I>(job: Job<I>, step: Step<I>): StepContext<I> {
  return {
    tenantId: TENANT,
    jobId: job.jobId,
    stepId: step.id,
    idempotencyKey: keyOf(job, step.id),
    inputs: job.inputs,
    apps: {
      shop: { baseUrl: job.sites.shop.baseUrl, allowedDomains: ['127.0.0.1'] },
      crm: { baseUrl: job.sites.crm.baseUrl, allowedDomains: ['127.0.0.1'] },
      billing: { baseUrl: job.sites.billing.baseUrl, allowedDomains: ['127.0.0.1'] },
    },
    credentials: {
      get: async (app) => {
        const username = job.accounts[app as DemoSiteName];
        if (!username) throw new Error(`the job has no account for ${app}`);
        return demoCredentials(app as DemoSiteName, username);
      },
    },
    log: memoryLogger(job.log),
    faultPoint: async () => undefined,
    files: createJobFiles({
      volumes: NO_VOLUMES,
      volumeName: 'none',
      tenantId: TENANT,
      jobId: job.jobId,
      downloads: NO_DOWNLOADS,
    }),
    evidence: (stepId) => job.evidence[stepId],
    actions: memoryStepActions(),
    takeover: async ({ reason }) => {
      throw new Error(`this harness has no person to take over (asked: ${reason})`);
    },
  };
}

export function stepOf<I>(playbook: Playbook<I>, id: string): Step<I> {
  const step = playbook.steps.find((s) => s.id === id);
  if (!step) throw new Error(`no step ${id} in ${playbook.id}`);
  return step;
}

/** Precondition as the engine checks it: `wrong_page` -> restore -> check again. */
export async function ready<I>(step: Step<I>, page: Page, ctx: StepContext<I>): Promise<PreconditionResult> {
  const pre = await step.precondition(page, ctx);
  if (pre.ok || pre.reason !== 'wrong_page') return pre;
  await step.restore(page, ctx);
  return step.precondition(page, ctx);
}

export interface Driven {
  pre: PreconditionResult;
  evidence: Evidence | null;
}

/**
 * One step as the engine runs it. A `signed_out` precondition is answered as the engine's
 * re-authentication does (the application's `signIn`, which must not need a person here).
 */
export async function drive<I>(
  playbook: Playbook<I>,
  step: Step<I>,
  page: Page,
  job: Job<I>,
): Promise<Driven> {
  const ctx = contextFor(job, step);
  // Tests share one browser between an application's pages; a background tab is throttled.
  await page.bringToFront();
  let pre = await ready(step, page, ctx);
  if (!pre.ok && pre.reason === 'signed_out') {
    const app = playbook.applications[step.app];
    if (!app) throw new Error(`no application ${step.app}`);
    const signIn = await app.signIn(page, ctx as unknown as StepContext);
    expect(signIn).toEqual({ status: 'signed_in' });
    pre = await ready(step, page, ctx);
  }
  if (!pre.ok) return { pre, evidence: null };
  await step.run(page, ctx);
  const evidence = await step.verify(page, ctx);
  if (evidence) job.evidence[step.id] = evidence;
  return { pre, evidence };
}

/** Drives steps in order up to (not including) `untilId`, expecting each to verify. */
export async function driveUntil<I>(
  playbook: Playbook<I>,
  untilId: string,
  page: Page,
  job: Job<I>,
): Promise<Evidence[]> {
  const out: Evidence[] = [];
  for (const step of playbook.steps) {
    if (step.id === untilId) break;
    const { pre, evidence } = await drive(playbook, step, page, job);
    expect(pre, step.id).toEqual({ ok: true });
    expect(evidence, step.id).not.toBeNull();
    if (evidence) out.push(evidence);
  }
  return out;
}

/**
 * Each step in a page of its own browser context, all at once (with the cookies of `from`):
 * restore, then precondition. Separate contexts keep every page in the foreground.
 */
export async function preconditionsInParallel<I>(
  browser: Browser,
  from: BrowserContext,
  job: Job<I>,
  steps: Step<I>[],
): Promise<Array<readonly [string, PreconditionResult]>> {
  const cookies = await from.cookies();
  return Promise.all(
    steps.map(async (step) => {
      const context = await browser.newContext();
      try {
        await context.addCookies(cookies);
        const page = await context.newPage();
        const ctx = contextFor(job, step);
        await step.restore(page, ctx);
        return [step.id, await step.precondition(page, ctx)] as const;
      } finally {
        await context.close();
      }
    }),
  );
}

/** Signs `username` in over HTTP and gives the browser context the session cookie (a profile that is signed in). */
export async function signedInContext(
  context: BrowserContext,
  baseUrl: string,
  site: DemoSiteName,
  username: string,
): Promise<SiteClient> {
  const client = new SiteClient(baseUrl);
  const c = demoCredentials(site, username);
  await client.signIn(c.username, c.password, c.totpSecret);
  const name = `${site}_sid`;
  const value = client.cookies.get(name);
  if (!value) throw new Error(`no ${name} cookie`);
  await context.addCookies([{ name, value, url: baseUrl }]);
  return client;
}
