import type { EngineDeps } from '../engine/types.ts';

/**
 * Keeps a job's browser lease alive while a handler works with its browser: renews it at
 * once if a third of its TTL has passed, then every third of the TTL until stopped. A
 * worker that dies stops renewing with it, so its lease expires and the slot frees itself.
 * The timer never keeps a process alive on its own.
 *
 * @returns a function that stops the renewals (call it when the handler returns).
 */
export function keepLeaseAlive(
  deps: Pick<EngineDeps, 'capacity' | 'settings' | 'log'>,
  tenantId: string,
  jobId: string,
): () => void {
  const ttl = deps.settings.leaseTtlSeconds;
  const renew = (ifRemainingBelow?: number): void => {
    deps.capacity
      .renew(tenantId, jobId, ifRemainingBelow === undefined ? {} : { ifRemainingBelow })
      .catch((err: unknown) =>
        deps.log.warn('could not renew the browser lease', { jobId, error: String(err) }),
      );
  };
  renew(Math.ceil((ttl * 2) / 3));
  const timer = setInterval(() => renew(), Math.max(1000, (ttl * 1000) / 3));
  timer.unref();
  return () => clearInterval(timer);
}
