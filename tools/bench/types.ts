/** The benchmark's shared types: a bench stack and what one Belay job measured. */
import type { EventEmitter } from 'node:events';
import type { Cost } from '../../lambdas/lib/ledger/types.ts';
import type { HistoryEvent } from '../../local/sfn/index.ts';
import type { LocalStack } from '../../local/stack.ts';

/** A local stack for the benchmark, its history events on `events`, and an API client. */
export interface BenchStack {
  stack: LocalStack;
  mode: 'warm' | 'cold';
  events: EventEmitter<{ history: [HistoryEvent] }>;
  api: ApiCall;
}

export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }>;

/** What one Belay job measured. */
export interface BelayRun {
  jobId: string;
  status: string;
  /** Submission (job created) to SUCCEEDED (job finished), from the job item's own times. */
  wallMs: number;
  /** Sum of the completed steps' own browser time (ledger `browserSeconds`), ms. */
  browserMs: number;
  /** Approval requested to approval recorded (the "person" answers at once), ms. */
  approvalWaitMs: number;
  steps: number;
  /** Whole RunStep invocation time of each completed step, by step index (ledger `lambdaMs`). */
  stepInvocationMs: number[];
  /** State transitions counted from the execution history (every execution of the job). */
  stateTransitions: number;
  /** Lambda invocations scheduled by the state machine (history: Lambda/Task scheduled events). */
  invocationsScheduled: number;
  /** Of them, RunNextStep handing on a RunStep result that was not `completed` (a wait, the finish). */
  relays: number;
  /** Sum of the cost records of every ledger entry of the job. */
  ledgerCost: Cost;
  /** Per ledger entry type: how many, and the invocations and writes they record. */
  ledgerByType: Record<string, { entries: number; lambdaInvocations: number; dynamoWrites: number }>;
  /** States entered, by state name (every execution of the job). */
  statesEntered: Record<string, number>;
  /** Lifetime of the job's browser session(s), seconds (what a browser provider bills). */
  sessionSeconds: number;
  /** Orders the shop committed under this job's place-order key (its own record). */
  ordersPlaced: number;
  /** Workers killed by the armed fault. */
  crashes: number;
  /** Why the job failed, when it did (the job item's `failure`). */
  failure?: string;
}
