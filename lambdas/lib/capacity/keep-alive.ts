import type { EngineDeps } from '../engine/types.ts';

/** A job's lease kept alive while a handler works: whether the job still held it, and how to stop. */
export interface LeaseKeeper {
  /**
   * Whether the job held its lease when the handler began (`false`: it had expired or was
   * released, and its slot may be another job's by now). A renewal that could not be made
   * (DynamoDB unreachable) counts as held: the handler's own writes will tell.
   */
  held: Promise<boolean>;
  /** Stops the renewals (call it when the handler returns). */
  stop(): void;
}

/**
 * Keeps a job's browser lease alive while a handler works with its browser: renews it at
 * once if a third of its TTL has passed, then every third of the TTL until stopped. A
 * worker that dies stops renewing with it, so its lease expires and the slot frees itself.
 * The timer never keeps a process alive on its own.
 */
export function keepLeaseAlive(
  deps: Pick<EngineDeps, 'capacity' | 'settings' | 'log'>,
  tenantId: string,
  jobId: string,
): LeaseKeeper {
  const ttl = deps.settings.leaseTtlSeconds;
  const renew = (ifRemainingBelow?: number): Promise<boolean> =>
    deps.capacity
      .renew(tenantId, jobId, ifRemainingBelow === undefined ? {} : { ifRemainingBelow })
      .catch((err: unknown) => {
        deps.log.warn('could not renew the browser lease', { jobId, error: String(err) });
        return true;
      });
  const held = renew(Math.ceil((ttl * 2) / 3));
  const timer = setInterval(() => void renew(), Math.max(1000, (ttl * 1000) / 3));
  timer.unref();
  return { held, stop: () => clearInterval(timer) };
}
