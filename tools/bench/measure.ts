/**
 * What a finished Belay job measured, read after the fact from the job item and its ledger
 * (one Query), the execution history of every execution of the job, the browser service's
 * session records and the shop's own record of orders.
 */

import { siteAdmin } from '../../demo/sites/admin-client.ts';
import { idempotencyKeyOf } from '../../lambdas/lib/engine/job-identity.ts';
import { type Cost, type LedgerEntry, ZERO_COST } from '../../lambdas/lib/ledger/types.ts';
import { countStateTransitions } from '../../local/sfn/index.ts';
import type { BelayRun, BenchStack } from './types.ts';

function sumCost(entries: readonly LedgerEntry[]): Cost {
  const total: Cost = { ...ZERO_COST };
  for (const e of entries) {
    for (const key of Object.keys(total) as (keyof Cost)[]) total[key] += e.cost?.[key] ?? 0;
  }
  return total;
}

function byType(entries: readonly LedgerEntry[]): BelayRun['ledgerByType'] {
  const out: BelayRun['ledgerByType'] = {};
  for (const e of entries) {
    const t = out[e.type] ?? { entries: 0, lambdaInvocations: 0, dynamoWrites: 0 };
    t.entries++;
    t.lambdaInvocations += e.cost?.lambdaInvocations ?? 0;
    t.dynamoWrites += e.cost?.dynamoWrites ?? 0;
    out[e.type] = t;
  }
  return out;
}

function countBy(names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = (out[n] ?? 0) + 1;
  return out;
}

const at = (e: LedgerEntry | undefined): number => (e ? Date.parse(e.at) : Number.NaN);

/** Reads what job `jobId` used; `executionArns` are its executions, `crashes` the faults fired. */
export async function measure(
  b: BenchStack,
  jobId: string,
  executionArns: string[],
  crashes: number,
): Promise<BelayRun> {
  const { stack } = b;
  const { job, entries } = await stack.ledger.readJob(stack.demoTenant, jobId);
  const completions = entries.filter((e) => e.type === 'step-completed');
  const stepInvocationMs: number[] = [];
  for (const e of completions) if (e.stepIndex !== undefined) stepInvocationMs[e.stepIndex] = e.cost.lambdaMs;
  const requested = entries.find((e) => e.type === 'approval-requested');
  const recorded = entries.find((e) => e.type === 'approval-recorded');
  const histories = executionArns.map((arn) => stack.sfn.getExecutionHistory(arn));
  const scheduled = histories
    .flat()
    .filter((h) => h.type === 'LambdaFunctionScheduled' || h.type === 'TaskScheduled').length;
  // RunNextStep entered with a RunStep result it only hands on (see `lambdas/run-step/next-step.ts`).
  const relays = histories.flat().filter((h) => {
    if (h.stateEnteredEventDetails?.name !== 'RunNextStep') return false;
    const input = JSON.parse(h.stateEnteredEventDetails.input ?? '{}') as { result?: { outcome?: string } };
    return input.result?.outcome !== 'completed';
  }).length;
  const sessionIds = new Set(
    [...Object.values(job.sessions ?? {}).map((s) => s.sessionId)].concat(
      entries.map((e) => e.sessionId).filter((s): s is string => Boolean(s)),
    ),
  );
  let sessionSeconds = 0;
  for (const s of stack.anchor.sessions()) {
    if (!sessionIds.has(s.id)) continue;
    const end = s.endedAt ? Date.parse(s.endedAt) : Date.now();
    sessionSeconds += (end - Date.parse(s.createdAt)) / 1000;
  }
  const writes = await siteAdmin(stack.sites.shop.baseUrl, stack.sites.adminToken).writes();
  return {
    jobId,
    status: job.status,
    wallMs: Date.parse(job.finishedAt ?? job.updatedAt) - Date.parse(job.createdAt),
    browserMs: completions.reduce((s, e) => s + e.cost.browserSeconds * 1000, 0),
    approvalWaitMs: requested && recorded ? at(recorded) - at(requested) : 0,
    steps: job.stepCount,
    stepInvocationMs,
    stateTransitions: histories.reduce((s, h) => s + countStateTransitions(h), 0),
    invocationsScheduled: scheduled,
    relays,
    ledgerCost: sumCost(entries),
    ledgerByType: byType(entries),
    statesEntered: countBy(
      histories.flat().flatMap((h) => (h.stateEnteredEventDetails ? [h.stateEnteredEventDetails.name] : [])),
    ),
    sessionSeconds,
    ordersPlaced: writes.countsByKey[idempotencyKeyOf(job, 'place-order')] ?? 0,
    crashes,
    ...(job.failure ? { failure: `${job.failure.reason}: ${job.failure.message}` } : {}),
  };
}
