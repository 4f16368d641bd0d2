/**
 * The hand-computed cost example the report tests check: three jobs' ledgers, and the
 * report worked out by hand from them at the rates dated 2026-11-01.
 */

import type { JobRecord } from '../../../lambdas/lib/api/reports/cost.ts';
import type { Cost, Job, LedgerEntry } from '../../../lambdas/lib/ledger/index.ts';
import { ZERO_COST } from '../../../lambdas/lib/ledger/index.ts';

/**
 * The example. Three jobs between 10:00 and 10:40 (the report is made at 10:40):
 * A SUCCEEDED (verified): session s1 10:00-10:10 (job end), steps 60 s + 120 s, one approval,
 *   500,000 model tokens and 250 MB of proxy traffic.
 * B FAILED: two retries; session s2 10:20-10:23:30 (replaced by s3), a 30 s step; s3 10:23:30-10:25.
 * C parked at 10:36, still waiting: session s4 10:30-10:36, a 20 s step, one approval.
 */
export const T = (hhmmss: string): string => `2026-11-02T${hhmmss}.000Z`;
export type Spec = [type: LedgerEntry['type'], at: string, cost: Partial<Cost>, extra?: Partial<LedgerEntry>];
const STEP = (ms: number, browser: number): Partial<Cost> => ({
  lambdaInvocations: 1,
  lambdaMs: ms,
  browserSeconds: browser,
  stateTransitions: 2,
  dynamoWrites: 2,
});
export const JOBS: {
  jobId: string;
  status: Job['status'];
  createdAt: string;
  finishedAt?: string;
  entries: Spec[];
}[] = [
  {
    jobId: 'A',
    status: 'SUCCEEDED',
    createdAt: T('10:00:00'),
    finishedAt: T('10:10:00'),
    entries: [
      ['job-created', T('10:00:00'), { dynamoWrites: 2 }],
      ['session-opened', T('10:00:00'), { dynamoWrites: 2 }, { sessionId: 's1' }],
      ['step-completed', T('10:01:00'), STEP(2000, 60), { sessionId: 's1' }],
      [
        'approval-requested',
        T('10:02:00'),
        { lambdaInvocations: 1, stateTransitions: 2, dynamoWrites: 2, humanInterventions: 1 },
      ],
      [
        'step-completed',
        T('10:09:00'),
        // Tokens a browser provider reported, priced when spent (500k at the blended $3/M).
        { ...STEP(1000, 120), modelTokens: 500_000, modelUsd: 1.5, proxyBytes: 250_000_000 },
        { sessionId: 's1' },
      ],
      ['succeeded', T('10:10:00'), { lambdaInvocations: 1, stateTransitions: 2, dynamoWrites: 2 }],
    ],
  },
  {
    jobId: 'B',
    status: 'FAILED',
    createdAt: T('10:20:00'),
    finishedAt: T('10:25:00'),
    entries: [
      ['job-created', T('10:20:00'), { dynamoWrites: 2 }],
      ['session-opened', T('10:20:00'), { dynamoWrites: 2 }, { sessionId: 's2' }],
      ['step-failed', T('10:21:00'), { dynamoWrites: 2 }],
      ['step-failed', T('10:22:00'), { dynamoWrites: 2 }],
      ['step-completed', T('10:23:00'), STEP(3000, 30), { sessionId: 's2' }],
      [
        'session-replaced',
        T('10:23:30'),
        { dynamoWrites: 2 },
        { sessionId: 's3', detail: { previous: 's2' } },
      ],
      ['failed', T('10:25:00'), { lambdaInvocations: 1, dynamoWrites: 2 }],
    ],
  },
  {
    jobId: 'C',
    status: 'WAITING_APPROVAL',
    createdAt: T('10:30:00'),
    entries: [
      ['job-created', T('10:30:00'), { dynamoWrites: 2 }],
      ['session-opened', T('10:30:00'), { dynamoWrites: 2 }, { sessionId: 's4' }],
      ['step-completed', T('10:30:30'), STEP(1000, 20), { sessionId: 's4' }],
      [
        'approval-requested',
        T('10:31:00'),
        { lambdaInvocations: 1, stateTransitions: 2, dynamoWrites: 2, humanInterventions: 1 },
      ],
      [
        'parked',
        T('10:36:00'),
        { lambdaInvocations: 1, lambdaMs: 500, stateTransitions: 3, dynamoWrites: 4 },
        { detail: { sessions: [{ sessionId: 's4' }] } },
      ],
    ],
  },
];
export const NOW = new Date(T('10:40:00'));

/**
 * By hand:
 * browser: sessions s1 600 s (180 active, 420 idle), s2 210 s (30, 180), s3 90 s (0, 90),
 *   s4 360 s (20, 340): 1260 s billed, 230 active, 1030 idle -> 1260/3600 h x $0.05 = $0.0175
 * Lambda: 9 invocations x $0.0000002 = $0.0000018; 7,500 ms = 7.5 GB-s x $0.0000133334 = $0.0001000005
 * Step Functions: 17 transitions x $0.000025 = $0.000425
 * DynamoDB: 38 writes (each job's creation 2, then 32) x $0.000000625 = $0.00002375
 * proxy: 0.25 GB x $4 = $1; model: 0.5 M tokens x $3 = $1.5; people: 2 x $0.5 = $1
 * total $3.5180505505, one verified completion (A) -> $3.5180505505 per verified completion.
 */
export const EXPECTED = {
  jobs: { total: 3, byStatus: { SUCCEEDED: 1, FAILED: 1, WAITING_APPROVAL: 1 } },
  verifiedCompletions: 1,
  retries: 2,
  humanInterventions: 2,
  usage: {
    browserSeconds: 1260,
    lambdaInvocations: 9,
    lambdaMs: 7500,
    stateTransitions: 17,
    dynamoWrites: 38,
    proxyBytes: 250_000_000,
    modelTokens: 500_000,
    modelUsd: 1.5,
    humanInterventions: 2,
  },
  browser: { sessionSeconds: 1260, activeSeconds: 230, idleSeconds: 1030 },
  cost: {
    browserSeconds: 0.0175,
    lambdaInvocations: 0.0000018,
    lambdaMs: 0.0001000005,
    stateTransitions: 0.000425,
    dynamoWrites: 0.00002375,
    proxyBytes: 1,
    // Model dollars appear once, on modelUsd, as priced when spent.
    modelTokens: 0,
    modelUsd: 1.5,
    humanInterventions: 1,
    total: 3.5180505505,
  },
  costPerVerifiedCompletion: 3.5180505505,
};

export function records(tenantId: string): JobRecord[] {
  return JOBS.map((spec) => ({
    job: {
      tenantId,
      jobId: spec.jobId,
      status: spec.status,
      createdAt: spec.createdAt,
      ...(spec.finishedAt ? { finishedAt: spec.finishedAt } : {}),
    } as Job,
    entries: spec.entries.map(([type, at, cost, extra], i) => ({
      tenantId,
      jobId: spec.jobId,
      entryId: `${at}-${i}`,
      type,
      at,
      cost: { ...ZERO_COST, ...cost },
      ...extra,
    })),
  }));
}
