/** What happened to a job, read from its ledger, its RunStep fault points and the demo sites' own records. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { idempotencyKeyOf } from '../../lambdas/lib/engine/job-identity.ts';
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import type { LedgerEntry } from '../../lambdas/lib/ledger/index.ts';
import type { EngineStack, JobsClient, SeenFaultPoint } from './engine-stack.ts';
import { RUN_STEP, TENANT } from './fixtures.ts';

export const ofType = (entries: readonly LedgerEntry[], type: LedgerEntry['type']): LedgerEntry[] =>
  entries.filter((e) => e.type === type);

/** Step ids of the `step-completed` entries, in ledger order. */
export const completedSteps = (entries: readonly LedgerEntry[]): string[] =>
  ofType(entries, 'step-completed').map((e) => e.step ?? '?');

/** The idempotency key the engine sends for a write step of a demo-tenant job (as the sites record it). */
export async function keyOf(
  engine: Pick<JobsClient, 'ledger'>,
  jobId: string,
  step: string,
): Promise<string> {
  return idempotencyKeyOf(await engine.ledger.getJob(TENANT, jobId), step);
}

/** RunStep's fault points for one job. */
export function runStepPoints(engine: EngineStack, jobId: string, point?: FaultPoint): SeenFaultPoint[] {
  return engine.faultPoints.filter(
    (p) =>
      p.functionName === RUN_STEP && p.info.jobId === jobId && (point === undefined || p.point === point),
  );
}

/**
 * How many times each step's action ran: RunStep reaches `before-action` once per execution
 * of a step's action, just before it acts (after the intent, for a write).
 */
export function executionsPerStep(engine: EngineStack, jobId: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const p of runStepPoints(engine, jobId, 'before-action')) {
    const i = p.info.stepIndex ?? -1;
    counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  return counts;
}

/**
 * Actions that started after their step had been completed in the ledger: a completed
 * step executed again (lost progress). Each is described; the list should be empty.
 */
export function reExecutedAfterCompletion(
  engine: EngineStack,
  jobId: string,
  entries: readonly LedgerEntry[],
): string[] {
  const completedAt = new Map<string, number>();
  for (const e of ofType(entries, 'step-completed')) {
    if (e.step && !completedAt.has(e.step)) completedAt.set(e.step, Date.parse(e.at));
  }
  return runStepPoints(engine, jobId, 'before-action')
    .filter((p) => {
      const done = p.info.step ? completedAt.get(p.info.step) : undefined;
      return done !== undefined && p.at > done;
    })
    .map(
      (p) =>
        `${p.info.step} (#${p.info.stepIndex}) ran at ${new Date(p.at).toISOString()} after its completion`,
    );
}

/**
 * A demo site's own persisted state (`<dataDir>/sites/<site>.json`, written through on every
 * change): the records behind its pages (orders with their lines, customer records, billing
 * accounts), for what the admin summary does not show.
 */
export function siteData<T>(engine: Pick<EngineStack, 'dataDir'>, site: 'shop' | 'crm' | 'billing'): T {
  const state = JSON.parse(readFileSync(join(engine.dataDir, 'sites', `${site}.json`), 'utf8')) as {
    data: T;
  };
  return state.data;
}
