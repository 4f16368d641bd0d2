import { providerTokensUsd } from '../lib/cost/rates.ts';
import { endUntrackedSessions } from '../lib/engine/cleanup.ts';
import { accountFor } from '../lib/engine/context.ts';
import type { EngineDeps, JobRef } from '../lib/engine/types.ts';
import { TERMINAL_STATUSES } from '../lib/ledger/types.ts';
import type { CheckedJob } from '../start/authorize.ts';

export type OpenSessionResult =
  | { outcome: 'reused' | 'opened' | 'replaced'; app: string; sessionId: string }
  | { outcome: 'stopped'; status: string };

/**
 * Makes sure the job holds a live session for the application it works in next (or `app`
 * when given): the recorded one if it is still alive, else a new session from the account's
 * persisted profile, recorded on the job. `last` is the previous state's result: after
 * `session_lost` it names the application whose session died. A checkpoint that points at a dead session is
 * discarded here, never retried against forever.
 */
export async function openSession(
  deps: EngineDeps,
  ref: JobRef & { app?: string; last?: { outcome?: string; app?: string } },
  /** The current job and its checked accounts, when this invocation has them already (Start). */
  checked?: CheckedJob,
): Promise<OpenSessionResult> {
  const job = checked?.job ?? (await deps.ledger.getJob(ref.tenantId, ref.jobId));
  if (TERMINAL_STATUSES.includes(job.status)) return { outcome: 'stopped', status: job.status };
  const playbook = deps.playbooks.get(job.playbook);
  const lostApp = ref.last?.outcome === 'session_lost' ? ref.last.app : undefined;
  const app = ref.app ?? lostApp ?? playbook.steps[Math.min(job.nextStep, playbook.steps.length - 1)]?.app;
  if (!app) throw new TypeError(`playbook ${playbook.id} has no steps`);

  const existing = job.sessions[app];
  if (existing && (await deps.browser.isAlive(existing.sessionId))) {
    return { outcome: 'reused', app, sessionId: existing.sessionId };
  }

  const account = checked?.accounts[app] ?? (await accountFor(deps, job, app));
  const owner = { tenantId: job.tenantId, jobId: job.jobId, application: app };
  // Sessions of this job and application that an earlier opening started and never recorded.
  await endUntrackedSessions(deps, owner, new Set(existing ? [existing.sessionId] : []));
  const mount = playbook.files?.[app];
  const volumes = mount
    ? [
        {
          volumeId: await deps.browser.volumes.ensure(deps.settings.filesVolume),
          readOnly: mount === 'read-only',
        },
      ]
    : undefined;
  const opened = await deps.browser.openSession({
    ...(volumes ? { volumes } : {}),
    profile: { name: account.profileName, persist: true },
    identityIds: account.identityId ? [account.identityId] : undefined,
    idleTimeoutMinutes: deps.settings.sessionIdleTimeoutMinutes,
    maxDurationMinutes: deps.settings.sessionMaxDurationMinutes,
    // The attempt is the job's version this opening starts from: a retried opening (nothing
    // recorded since) carries the same, a later one another.
    tags: { ...owner, attempt: String(job.version) },
  });
  const now = deps.clock().toISOString();
  // What the replaced session used, as the provider reports it, goes on the replacement's
  // entry (a session the engine ended has it on its session-ended entry already).
  const replacedUsage =
    existing && !existing.endedAt
      ? await deps.browser.usage(existing.sessionId).catch(() => undefined)
      : undefined;
  try {
    await deps.recordSessionOwner(opened.sessionId, job.tenantId, job.jobId, app);
    await deps.ledger.updateJob(job.tenantId, job.jobId, {
      expectedVersion: job.version,
      set: {
        sessions: {
          ...job.sessions,
          [app]: {
            sessionId: opened.sessionId,
            profileName: account.profileName,
            identityId: account.identityId,
            openedAt: now,
            ...(opened.liveViewUrl ? { liveViewUrl: opened.liveViewUrl } : {}),
          },
        },
      },
      entry: {
        type: existing ? 'session-replaced' : 'session-opened',
        sessionId: opened.sessionId,
        identityId: account.identityId,
        detail: {
          application: app,
          profile: account.profileName,
          ...(existing ? { previous: existing.sessionId } : {}),
        },
        // This invocation (OpenSession's, or Start's when it opened the session) is recorded here.
        cost: {
          lambdaInvocations: 1,
          dynamoWrites: 2,
          proxyBytes: replacedUsage?.proxyBytes ?? 0,
          modelTokens: replacedUsage?.modelTokens ?? 0,
          modelUsd: providerTokensUsd(replacedUsage?.modelTokens ?? 0),
        },
      },
    });
  } catch (err) {
    // Someone else moved the job on: this session is nobody's, so it must not outlive us.
    await deps.browser.endSession(opened.sessionId).catch(() => undefined);
    throw err;
  }
  if (existing) await deps.browser.endSession(existing.sessionId).catch(() => undefined);
  return { outcome: existing ? 'replaced' : 'opened', app, sessionId: opened.sessionId };
}
