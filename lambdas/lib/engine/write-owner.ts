import { randomUUID } from 'node:crypto';
import type { Job, WriteOwner } from '../ledger/types.ts';
import type { EngineDeps } from './types.ts';

/**
 * One attempt owns a write from its intent on, and shows it lives: two attempts of a step can
 * overlap (Step Functions retries a task after a client error while the first invocation
 * still runs), and the second must not trust a probe's `absent` while the first may still
 * commit. The owner renews a heartbeat every {@link WRITE_HEARTBEAT_MS} and releases the write
 * when its invocation ends; another attempt waits until the owner released it or stayed
 * silent for {@link WRITE_OWNER_SILENCE_MS} (a worker killed outright stops beating at once).
 */

/** How often the owner of a write shows it lives. */
export const WRITE_HEARTBEAT_MS = 2_000;

/** Silence after which an owner that did not release its write is taken for dead. */
export const WRITE_OWNER_SILENCE_MS = 3 * WRITE_HEARTBEAT_MS + 1_000;

/** A new owner record for the intent of `step`. */
export function newWriteOwner(step: string, now: Date): WriteOwner {
  return { step, attemptId: randomUUID(), heartbeatAt: now.toISOString() };
}

/** A write owned by this attempt: its heartbeat runs until `end`. */
export interface OwnedWrite {
  /** Heartbeats written so far (DynamoDB writes the step's cost counts). */
  readonly beats: number;
  /** Stops the heartbeat; releases the write unless `settled` (its checkpoint is written). */
  end(settled: boolean): Promise<void>;
}

/** Starts the heartbeat of the owner of `job`'s write intent. A failed beat is logged, never thrown. */
export function keepWriteOwned(
  deps: Pick<EngineDeps, 'ledger' | 'log'>,
  job: Job,
  owner: WriteOwner,
): OwnedWrite {
  let beats = 0;
  const touch = (release: boolean): Promise<void> =>
    deps.ledger
      .touchWriteOwner(job.tenantId, job.jobId, owner.attemptId, { release })
      .then(() => {
        beats++;
      })
      .catch((err: unknown) => deps.log.warn('could not renew the write heartbeat', { error: String(err) }));
  const timer = setInterval(() => void touch(false), WRITE_HEARTBEAT_MS);
  timer.unref();
  return {
    get beats() {
      return beats;
    },
    async end(settled) {
      clearInterval(timer);
      if (!settled) await touch(true);
    },
  };
}

/**
 * How long until the owner of `step`'s intent can be taken for dead: 0 when it released the
 * write, went silent, or owns another step's; otherwise the milliseconds left.
 */
export function ownerActiveFor(job: Job, step: string, now: Date): number {
  const owner = job.writeOwner;
  if (!owner || owner.step !== step || owner.releasedAt) return 0;
  const silentFor = now.getTime() - Date.parse(owner.heartbeatAt);
  return Math.max(0, WRITE_OWNER_SILENCE_MS - silentFor);
}
