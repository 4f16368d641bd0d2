import { randomUUID } from 'node:crypto';
import { IdentitySignedOutError } from '../accounts/errors.ts';
import type { Account } from '../accounts/types.ts';
import { SessionGoneError } from '../browser/errors.ts';
import type { Attached } from '../browser/types.ts';
import { createJobFiles, NO_DOWNLOADS, type StepDownloads } from '../files/job-files.ts';
import type { Job, LedgerEntry } from '../ledger/types.ts';
import type { Playbook, Step, StepActions, StepContext } from '../playbooks/contract.ts';
import { TakeoverRequestedError } from '../playbooks/errors.ts';
import { AccountRevokedError, JobConfigurationError } from './errors.ts';
import { verifiedEvidence } from './history.ts';
import { idempotencyKeyOf } from './job-identity.ts';
import { modelCallAppender, readOnlyStepActions } from './step-actions.ts';
import type { ApplicationEndpoint, EngineDeps } from './types.ts';

/** Longest a single browser action (click, fill, navigation) may take inside a step. */
export const STEP_ACTION_TIMEOUT_MS = 15_000;

/** The account a job acts as in `app`, checked to still be the tenant's and connected. */
export async function accountFor(deps: EngineDeps, job: Job, app: string): Promise<Account> {
  const accountId = job.accounts[app];
  if (!accountId) throw new JobConfigurationError(`job ${job.jobId} names no account for application ${app}`);
  const account = await deps.accounts.get(job.tenantId, accountId);
  if (account?.status !== 'connected' || account.application !== app || account.tenantId !== job.tenantId) {
    throw new AccountRevokedError(app, accountId);
  }
  return account;
}

/** Every account the job acts as, by application, each checked as `accountFor` does. */
export async function accountsOf(deps: EngineDeps, job: Job): Promise<Record<string, Account>> {
  const accounts: Record<string, Account> = {};
  for (const app of Object.keys(deps.playbooks.get(job.playbook).applications)) {
    accounts[app] = await accountFor(deps, job, app);
  }
  return accounts;
}

export function endpointFor(deps: EngineDeps, app: string): ApplicationEndpoint {
  const endpoint = deps.applications[app];
  if (!endpoint) throw new JobConfigurationError(`no endpoint is configured for application ${app}`);
  return endpoint;
}

/**
 * The step context a playbook step runs with: inputs, idempotency key, credentials, redacting
 * logger, the evidence earlier steps verified (from `entries`, the job's ledger as read), the
 * step's action record: written by the step only where it runs (RunStep gives a live one),
 * read-only elsewhere (probes, sign-ins), and the step's page's downloads (RunStep's; none
 * elsewhere).
 */
export function stepContext(
  deps: EngineDeps,
  job: Job,
  playbook: Playbook,
  step: Step,
  stepIndex: number,
  entries: readonly LedgerEntry[],
  actions: StepActions = readOnlyStepActions(
    job,
    entries,
    step.id,
    modelCallAppender(deps.ledger, job, step, stepIndex),
  ),
  downloads: StepDownloads = NO_DOWNLOADS,
): StepContext {
  const evidence = verifiedEvidence(entries);
  const apps: StepContext['apps'] = {};
  for (const name of Object.keys(playbook.applications)) {
    const endpoint = deps.applications[name];
    if (endpoint) apps[name] = { baseUrl: endpoint.baseUrl, allowedDomains: [...endpoint.allowedDomains] };
  }
  return {
    tenantId: job.tenantId,
    jobId: job.jobId,
    stepId: step.id,
    idempotencyKey: idempotencyKeyOf(job, step.id),
    inputs: job.inputs,
    apps,
    credentials: {
      get: async (application: string) => {
        const account = await accountFor(deps, job, application);
        // Signed in by Anchor, not by Belay: asked for credentials, its sign-in did not hold.
        if (account.connectedWith === 'identity')
          throw new IdentitySignedOutError(account.accountId, application);
        return deps.secrets.getCredentials(job.tenantId, account.accountId);
      },
    },
    log: deps.log.child({ tenantId: job.tenantId, jobId: job.jobId, step: step.id, requestId: randomUUID() }),
    faultPoint: (point, at) =>
      deps.faultPoint(point, {
        jobId: job.jobId,
        step: step.id,
        stepIndex,
        ...(at ? { action: at.action } : {}),
      }),
    evidence: (stepId) => {
      const found = evidence.get(stepId);
      return found ? { ...found } : undefined;
    },
    actions,
    takeover: async (request) => {
      const reason = typeof request?.reason === 'string' ? request.reason.trim().slice(0, 500) : '';
      if (!reason) throw new TypeError(`${step.id}: ctx.takeover needs a reason for the person`);
      if (takeoverDone(entries, step.id)) return;
      throw new TakeoverRequestedError(step.id, reason);
    },
    files: createJobFiles({
      volumes: deps.browser.volumes,
      volumeName: deps.settings.filesVolume,
      tenantId: job.tenantId,
      jobId: job.jobId,
      downloads,
    }),
  };
}

/**
 * A person completed a takeover of this step since it was last asked for, and no attempt of the
 * step failed after it (then the page was brought back to the step's start, and it asks again).
 */
export function takeoverDone(entries: readonly LedgerEntry[], step: string): boolean {
  let done = false;
  for (const e of entries) {
    if (e.step !== step) continue;
    if (e.type === 'takeover-requested' || e.type === 'step-failed' || e.type === 'step-completed')
      done = false;
    else if (e.type === 'takeover-completed') done = true;
  }
  return done;
}

export type AttachResult = { ok: true; attached: Attached } | { ok: false; detail: string };

/** Reattach to the job's session for `app`; a session that is gone is reported, not thrown. */
export async function attachFor(deps: EngineDeps, job: Job, app: string): Promise<AttachResult> {
  const ref = job.sessions[app];
  if (!ref) return { ok: false, detail: `no browser session yet for ${app}` };
  try {
    const attached = await deps.browser.attach(ref.sessionId, {
      allowedDomains: endpointFor(deps, app).allowedDomains,
    });
    return { ok: true, attached };
  } catch (err) {
    if (err instanceof SessionGoneError)
      return { ok: false, detail: `session ${ref.sessionId} is gone: ${err.message}` };
    throw err;
  }
}

/** Did the browser die under us (as opposed to the page misbehaving)? */
export function browserLost(attached: Attached, err: unknown): boolean {
  if (err instanceof SessionGoneError) return true;
  if (!attached.browser.isConnected()) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /Target (page, context or browser )?(has been )?closed|Browser has been closed|browser has disconnected|WebSocket/i.test(
    message,
  );
}
