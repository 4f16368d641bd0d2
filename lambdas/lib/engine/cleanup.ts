import type { SessionUsage } from '../browser/types.ts';
import { providerTokensUsd } from '../cost/rates.ts';
import { StaleCheckpointError } from '../ledger/errors.ts';
import type { Cost, Job } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/** A session a job held, as it was ended. */
export interface EndedSession {
  application: string;
  sessionId: string;
  openedAt: string;
  /** What the provider reported it used, read just before it ended (absent when it could not say). */
  usage?: SessionUsage;
}

/**
 * Ends every session the job holds, gracefully: the provider saves each persisted profile
 * first, so a later session from the same profile starts with its cookies (signed in).
 * Before each end, what the provider reports the session used (proxy bytes, model tokens)
 * is read and recorded on a `session-ended` entry, so the job's cost includes it.
 * Idempotent; a session that cannot be ended now ends by its idle timeout.
 */
export async function endJobSessions(deps: EngineDeps, job: Job): Promise<EndedSession[]> {
  const ended: EndedSession[] = [];
  // The job as last written here: each session's end is recorded under its version.
  let current = job;
  for (const [app, ref] of Object.entries(job.sessions ?? {})) {
    if (ref.endedAt) {
      // Ended and recorded by an earlier call.
      ended.push({ application: app, sessionId: ref.sessionId, openedAt: ref.openedAt });
      continue;
    }
    let usage: SessionUsage | undefined;
    try {
      usage = await deps.browser.usage(ref.sessionId).catch(() => undefined);
      await deps.browser.detach(ref.sessionId);
      await deps.browser.endSession(ref.sessionId);
      current = await recordSessionEnd(deps, current, app, ref.sessionId, usage);
    } catch (err) {
      // A session that cannot be ended now ends by its idle timeout; the job's outcome stands.
      deps.log.warn('could not end session', {
        jobId: job.jobId,
        app,
        sessionId: ref.sessionId,
        error: String(err),
      });
    }
    ended.push({
      application: app,
      sessionId: ref.sessionId,
      openedAt: ref.openedAt,
      ...(usage ? { usage } : {}),
    });
  }
  return ended;
}

/**
 * The `session-ended` entry of a session the engine ended, with the usage the provider
 * reported, written once: with the session marked ended on the job item (`endedAt`), under
 * the job's version (the job as the caller has it first; read again only when it changed
 * meanwhile). A repeat (cancel and the failure path both ending the job's sessions, a
 * retried task) finds it marked and writes nothing, so the usage is never counted twice.
 *
 * @returns the job as it is after the entry (or as found, when there was nothing to write)
 */
async function recordSessionEnd(
  deps: EngineDeps,
  given: Job,
  app: string,
  sessionId: string,
  usage: SessionUsage | undefined,
): Promise<Job> {
  let job = given;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) job = await deps.ledger.getJob(given.tenantId, given.jobId);
    const session = job.sessions[app];
    if (session?.sessionId !== sessionId || session.endedAt) return job;
    try {
      return await deps.ledger.updateJob(job.tenantId, job.jobId, {
        expectedVersion: job.version,
        set: { sessions: { ...job.sessions, [app]: { ...session, endedAt: deps.clock().toISOString() } } },
        entry: {
          type: 'session-ended',
          sessionId,
          // The usage itself is the entry's cost (proxyBytes, modelTokens and their dollars).
          detail: {
            application: app,
            endedBy: 'engine',
            usageReported: usage !== undefined,
            ...(usage?.providerSeconds !== undefined ? { providerSeconds: usage.providerSeconds } : {}),
          },
          cost: {
            proxyBytes: usage?.proxyBytes ?? 0,
            modelTokens: usage?.modelTokens ?? 0,
            modelUsd: providerTokensUsd(usage?.modelTokens ?? 0),
            dynamoWrites: 2,
          },
        },
      });
    } catch (err) {
      if (!(err instanceof StaleCheckpointError)) throw err;
    }
  }
  return job;
}

/** What a `parked` entry says besides the sessions it ended. */
export interface Parking {
  step: string;
  stepIndex?: number;
  detail: Record<string, unknown>;
  cost: Partial<Cost>;
}

/**
 * Gives the job's browsers back while it waits (a long human wait, a lost lease): ends its
 * sessions (profiles persisted, so the next session starts signed in), then clears them from
 * the job with a `parked` entry that lists them (the cost report takes their end from it).
 * `record: false` (a repeat that found the parking written already) only ends the sessions.
 */
export async function parkSessions(
  deps: EngineDeps,
  job: Job,
  parking: Parking,
  record = true,
): Promise<EndedSession[]> {
  const ended = await endJobSessions(deps, job);
  if (record) {
    await deps.ledger.updateJob(job.tenantId, job.jobId, {
      set: { sessions: {} },
      entry: {
        type: 'parked',
        step: parking.step,
        ...(parking.stepIndex === undefined ? {} : { stepIndex: parking.stepIndex }),
        detail: {
          ...parking.detail,
          sessions: ended.map((s) => ({ application: s.application, sessionId: s.sessionId })),
        },
        cost: parking.cost,
      },
    });
  }
  return ended;
}

/**
 * Ends every session the job holds (profiles persisted on a graceful end) and gives its
 * browser leases back. Idempotent: safe to repeat after a crash at any line. Sessions end
 * before the lease is released, so a job waiting for the slot never starts while this
 * job's browser is still open.
 */
export async function releaseJobResources(deps: EngineDeps, job: Job): Promise<void> {
  await endJobSessions(deps, job);
  await endUnrecordedSessions(deps, job);
  await deps.capacity.release(job.tenantId, job.jobId);
  // The sessions' ends were appended after the job finished: they expire with it too. Best
  // effort: the next write to the finished job (a retried Finish or RecordFailure) stamps again.
  try {
    await deps.ledger.expireEntries(job);
  } catch (err) {
    deps.log.warn('entries of a finished job not given its TTL', { jobId: job.jobId, error: String(err) });
  }
}

/** Ends the running sessions tagged with the job that it never recorded (see `endUntrackedSessions`). */
function endUnrecordedSessions(deps: EngineDeps, job: Job): Promise<void> {
  const held = new Set(Object.values(job.sessions ?? {}).map((s) => s.sessionId));
  return endUntrackedSessions(deps, { tenantId: job.tenantId, jobId: job.jobId }, held);
}

/**
 * Ends the running sessions that carry every one of `tags` (the job's, and the application's
 * for one opening) and are not among the `held` ones: sessions an opening started but never
 * recorded (its create's response lost, its worker dead before the write). Nothing else would
 * end them before their idle timeout, and each counts against the plan's concurrency until
 * then. Best effort: a failure to look, or to end one, is logged and the caller goes on.
 */
export async function endUntrackedSessions(
  deps: Pick<EngineDeps, 'browser' | 'log'>,
  tags: Record<string, string>,
  held: ReadonlySet<string>,
): Promise<void> {
  let found: string[];
  try {
    found = await deps.browser.runningSessions(tags);
  } catch (err) {
    deps.log.warn('orphaned sessions not looked for', { ...tags, error: String(err) });
    return;
  }
  for (const sessionId of found.filter((id) => !held.has(id))) {
    try {
      await deps.browser.endSession(sessionId);
      deps.log.info('orphaned session ended', { ...tags, sessionId });
    } catch (err) {
      deps.log.warn('could not end session', { ...tags, sessionId, error: String(err) });
    }
  }
}
