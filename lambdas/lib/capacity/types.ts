/** Browser capacity: leases under a tenant's cap on concurrent sessions. */

export type AcquireResult =
  | { outcome: 'acquired' }
  | { outcome: 'queued'; position: number; retryAfterSeconds: number };

export interface Capacity {
  /** Take `sessions` leases for the job, in submission order. Idempotent: a job holding its leases gets `acquired`. */
  acquire(
    tenantId: string,
    jobId: string,
    options: { sessions: number; queuedAt: string },
  ): Promise<AcquireResult>;
  /** Extend the job's leases (a live holder renews them; a dead one's expire by themselves). */
  renew(tenantId: string, jobId: string): Promise<void>;
  /** Give the job's leases back. Idempotent. */
  release(tenantId: string, jobId: string): Promise<void>;
}
