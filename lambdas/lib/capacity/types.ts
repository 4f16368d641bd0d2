/** Browser capacity: leases under a tenant's cap on concurrent sessions. */

export type AcquireResult =
  | { outcome: 'acquired' }
  | {
      outcome: 'queued';
      /** 1 = the next job of the tenant to start. */
      position: number;
      retryAfterSeconds: number;
      /** Why it waits: the tenant's cap is reached, or (serialized accounts) another job holds one of its accounts. */
      reason: 'cap' | 'account';
    };

export interface AcquireOptions {
  /** Browser sessions the job holds at once (one per application it works in). */
  sessions: number;
  /** When the job was submitted: jobs take slots in this order. */
  queuedAt: string;
  /** Connected account ids the job acts as; with account serialization, one job per account at a time. */
  accounts?: readonly string[];
}

export interface RenewOptions {
  /** Extend to now + this many seconds (default: the lease TTL). A job entering a human wait covers the wait. */
  forSeconds?: number;
  /** Renew only when less than this many seconds are left (saves a write per step). */
  ifRemainingBelow?: number;
}

export interface Capacity {
  /** Take `sessions` leases for the job, in submission order. Idempotent: a job holding its leases gets `acquired`. */
  acquire(tenantId: string, jobId: string, options: AcquireOptions): Promise<AcquireResult>;
  /**
   * Extend the job's leases (a live holder renews them; a dead one's expire by themselves).
   * Returns false when the job holds no lease to renew.
   */
  renew(tenantId: string, jobId: string, options?: RenewOptions): Promise<boolean>;
  /** Give the job's leases back. Idempotent. */
  release(tenantId: string, jobId: string): Promise<void>;
  /** The place of a QUEUED job in its tenant's queue (1 = next to start). */
  queuePosition?(tenantId: string, jobId: string, queuedAt: string): Promise<number>;
}
