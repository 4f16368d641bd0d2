/**
 * The engine's cores run in this process, against the real ledger (DynamoDB Local) and small
 * stand-ins for the rest: for scenarios the local stack cannot stage at an exact instant
 * (two attempts overlapping, a browser dying inside a probe).
 */
import type { Browser, Page } from 'playwright-core';
import { memoryActionCacheStore } from '../../lambdas/lib/agent/cache/store.ts';
import type { Attached, BrowserAdapter } from '../../lambdas/lib/browser/types.ts';
import { NO_VOLUMES } from '../../lambdas/lib/browser/volumes.ts';
import type { WriteGuardReport } from '../../lambdas/lib/browser/write-guard.ts';
import { DEFAULT_SETTINGS, type EngineDeps } from '../../lambdas/lib/engine/types.ts';
import { createNoScreenshotStore } from '../../lambdas/lib/evidence/store.ts';
import type { Ledger } from '../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../lambdas/lib/logger.ts';
import type { Playbook, Step } from '../../lambdas/lib/playbooks/contract.ts';
import { jobRequest, newId } from './ledger.ts';

/**
 * A browser whose sessions are always there; `page` and `connected` shape what a step meets,
 * `resent` what its write guard reports the browser sent again by itself.
 */
export function fakeBrowser(
  options: { page?: Page; connected?: () => boolean; resent?: WriteGuardReport['resent'] } = {},
): BrowserAdapter {
  const attached = (sessionId: string): Attached => ({
    sessionId,
    browser: { isConnected: options.connected ?? (() => true) } as unknown as Browser,
    page: options.page ?? ({} as Page),
    reused: true,
    blockedRequests: () => [],
    refuseWrites: async () => ({ end: () => [] }),
    guardWrites: async () => ({
      finish: async () => ({
        prevented: false,
        observed: options.resent !== undefined,
        unsafeRequests: 1,
        resent: options.resent ?? [],
        requests: [],
        refused: [],
      }),
    }),
  });
  return {
    volumes: NO_VOLUMES,
    openSession: async () => ({ sessionId: 's', cdpUrl: 'ws://127.0.0.1:9' }),
    attach: async (sessionId) => attached(sessionId),
    detach: async () => undefined,
    endSession: async () => undefined,
    isAlive: async () => true,
    runningSessions: async () => [],
    liveViewLink: () => undefined,
    revokeLiveViews: async () => undefined,
    usage: async () => ({ proxyBytes: 0, modelTokens: 0 }),
  };
}

/** Engine dependencies for cores run in this process: the real ledger, everything else a small stand-in. */
export function depsFor(
  ledger: Ledger,
  playbook: Playbook,
  browser: BrowserAdapter = fakeBrowser(),
): EngineDeps {
  return {
    ledger,
    browser,
    playbooks: {
      get: () => playbook,
      list: () => [playbook],
      sourceOf: () => 'test/support/in-process.ts',
    },
    accounts: {
      get: async (tenant: string, accountId: string) => ({
        tenantId: tenant,
        accountId,
        application: 'site',
        label: 'site',
        profileName: 'p',
        status: 'connected',
        createdAt: new Date().toISOString(),
      }),
    },
    secrets: { getCredentials: async () => ({ username: 'u', password: 'p' }) },
    capacity: { renew: async () => true, release: async () => undefined },
    applications: { site: { baseUrl: 'http://127.0.0.1:9', allowedDomains: ['127.0.0.1'] } },
    notifier: { waiting: async () => undefined, checkFailed: async () => undefined },
    clock: () => new Date(),
    log: createLogger({ service: 'test', sink: () => undefined }),
    recordSessionOwner: async () => undefined,
    faultPoint: async () => undefined,
    screenshots: createNoScreenshotStore(),
    actionCache: memoryActionCacheStore(),
    settings: { ...DEFAULT_SETTINGS, retryBackoffSeconds: 0 },
  } as unknown as EngineDeps;
}

/** A RUNNING job of `playbook` (one step, application `site`) at its first step, with a live session. */
export async function runningJob(
  ledger: Ledger,
  tenantId: string,
  playbook: string,
  stepCount = 1,
): Promise<string> {
  const jobId = newId('job');
  const { job } = await ledger.createJob(
    tenantId,
    jobId,
    jobRequest({ playbook, accounts: { site: 'acct-site' }, approvals: [] }),
    stepCount,
  );
  const running = await ledger.transition(tenantId, jobId, 'RUNNING', { expectedVersion: job.version });
  await ledger.updateJob(tenantId, jobId, {
    expectedVersion: running.version,
    set: { sessions: { site: { sessionId: `${jobId}-s`, openedAt: new Date().toISOString() } } },
  });
  return jobId;
}

/**
 * `report@1`: a playbook of one step (a write, `submit`) on the application `site`, whose sign-in
 * always succeeds: what {@link depsFor} and {@link runningJob} are shaped for.
 */
export function oneWritePlaybook(submit: Step): Playbook {
  return {
    name: 'report',
    version: 1,
    id: 'report@1',
    description: 'Submit a report (tests).',
    inputSchema: { parse: (v: unknown) => v },
    applications: {
      site: {
        name: 'site',
        isSignedOut: async () => false,
        signIn: async () => ({ status: 'signed_in' }),
        submitOneTimeCode: async () => ({ status: 'signed_in' }),
      },
    },
    steps: [submit],
  } as unknown as Playbook;
}

/**
 * The intent of `submit` (step 0) written with its write owner, as a worker leaves it that wrote
 * its intent and then stopped: `releasedAt` when its invocation ended, none when it died.
 */
export async function openIntent(
  ledger: Ledger,
  tenantId: string,
  jobId: string,
  owner: { attemptId: string; heartbeatAt: string; releasedAt?: string },
): Promise<void> {
  const job = await ledger.getJob(tenantId, jobId);
  await ledger.updateJob(tenantId, jobId, {
    expectedVersion: job.version,
    set: { writeOwner: { step: 'submit', ...owner } },
    entry: { type: 'step-started', step: 'submit', stepIndex: 0, attempt: 1, cost: { dynamoWrites: 2 } },
  });
}

/** `submit` (step 0) completed, verified with `{ submitted: true }`. */
export async function completeSubmit(ledger: Ledger, tenantId: string, jobId: string): Promise<void> {
  const job = await ledger.getJob(tenantId, jobId);
  await ledger.completeStep({
    tenantId,
    jobId,
    expectedVersion: job.version,
    stepIndex: 0,
    step: 'submit',
    attempt: 1,
    evidence: { submitted: true },
    cost: {},
  });
}
