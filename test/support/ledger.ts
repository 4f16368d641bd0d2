import { randomBytes } from 'node:crypto';
import type { Ledger } from '../../lambdas/lib/ledger/index.ts';
import {
  type Job,
  type JobRequest,
  type JobStatus,
  type LedgerEntry,
  type LedgerEntryType,
  type PendingWait,
  type WaitKind,
  ZERO_COST,
} from '../../lambdas/lib/ledger/types.ts';

/** Shared builders for the ledger tests. */

export function newId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export function jobRequest(overrides: Partial<JobRequest> = {}): JobRequest {
  return {
    playbook: 'checkout@1',
    inputs: { sku: 'A-1', quantity: 2 },
    accounts: { shop: 'acct-1' },
    approvals: ['place-order'],
    retryBudget: 3,
    ...overrides,
  };
}

/** A clock the test moves by hand; starts at the real time so DynamoDB never sees odd TTLs. */
export interface TestClock {
  now: () => Date;
  advance(ms: number): void;
}

export function testClock(start = Date.now()): TestClock {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
  };
}

export const WAIT_KIND: Record<
  'WAITING_APPROVAL' | 'WAITING_MFA' | 'WAITING_REVIEW' | 'WAITING_TAKEOVER',
  WaitKind
> = {
  WAITING_TAKEOVER: 'takeover',
  WAITING_APPROVAL: 'approval',
  WAITING_MFA: 'mfa',
  WAITING_REVIEW: 'review',
};

export function pendingWait(kind: WaitKind, taskToken = newId('token')): PendingWait {
  return {
    kind,
    step: 'place-order',
    stepIndex: 1,
    taskToken,
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    requestedAt: new Date().toISOString(),
    reason: 'needs_approval',
  };
}

/** Creates a job and moves it to `status` along legal transitions. */
export async function jobIn(
  ledger: Ledger,
  tenantId: string,
  status: JobStatus,
  stepCount = 3,
): Promise<Job> {
  const jobId = newId('job');
  const { job } = await ledger.createJob(tenantId, jobId, jobRequest(), stepCount);
  switch (status) {
    case 'QUEUED':
      return job;
    case 'FAILED':
    case 'CANCELLED':
      return ledger.transition(tenantId, jobId, status, { failure: { reason: 'test', message: 'test' } });
    default: {
      const running = await ledger.transition(tenantId, jobId, 'RUNNING');
      if (status === 'RUNNING') return running;
      if (status === 'SUCCEEDED') return ledger.transition(tenantId, jobId, 'SUCCEEDED');
      return ledger.setWait(tenantId, jobId, pendingWait(WAIT_KIND[status]), status);
    }
  }
}

/**
 * Ledger entries for tests of what reads them: each call makes the next entry of job `j` of
 * tenant `t`, its id and time in the order made, written by `actor`.
 */
export function entryMaker(
  actor = 'key_1',
): (type: LedgerEntryType, step: string, detail?: Record<string, unknown>) => LedgerEntry {
  let seq = 0;
  return (type, step, detail) => {
    seq += 1;
    return {
      tenantId: 't',
      jobId: 'j',
      entryId: String(seq).padStart(6, '0'),
      type,
      step,
      detail,
      cost: { ...ZERO_COST },
      at: new Date(seq * 1000).toISOString(),
      actor,
    };
  };
}
