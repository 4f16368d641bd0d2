/**
 * Every invocation of an engine function is recorded in the job's ledger exactly once, with
 * its time, so cost reports count what was run and not only what completed a step.
 *
 * A core records its invocation on the entry it writes anyway (a completion, a wait, a
 * sign-in...) by giving that entry `lambdaInvocations: 1`; the metered ledger fills in the
 * invocation's time and its states when the core left them out. An invocation that wrote no such entry (a
 * queued Start asking again, a RunStep that ends waiting for a person, a failed attempt) gets an
 * `invocation` entry of its own when it ends, saying which function ran and how it ended.
 *
 * What cannot be recorded: an invocation killed before it ended (its process is gone). The
 * retry that follows records itself, and the state machine's history still counts both.
 */
import type { Ledger, LedgerEntryInput } from '../ledger/index.ts';
import type { Cost, ScreenshotRef } from '../ledger/types.ts';
import type { StateMachineFunction } from './functions.ts';
import { Relayed } from './relay.ts';
import type { EngineDeps, JobRef } from './types.ts';

/**
 * States the execution enters for one invocation of each function, when nothing else records
 * them: the task and the Choice that routes its result (`Start` + `StartOutcome`,
 * `RunNextStep` + `Route`, ...). A callback task (AwaitHuman) is one state. RunStep's function
 * runs in two states: from `RunNextStep` it is followed by `Route` (the 2 here), from `RunStep`
 * by `RunNextStep`, which records itself: one state (`statesOf`).
 */
export const TRANSITIONS_PER_INVOCATION: Readonly<Record<StateMachineFunction, number>> = Object.freeze({
  Start: 2,
  OpenSession: 1,
  RunStep: 2,
  Reauthenticate: 2,
  Reconcile: 2,
  AwaitHuman: 1,
  Finish: 2,
  RecordFailure: 2,
});

/**
 * States one invocation of `fn` for `ref` accounts for: {@link TRANSITIONS_PER_INVOCATION},
 * except RunStep's function invoked from the `RunStep` state (its event has no `previous`),
 * which is that one state.
 */
export function statesOf(fn: StateMachineFunction, ref: unknown): number {
  const chained = typeof ref === 'object' && ref !== null && 'previous' in ref;
  return fn === 'RunStep' && !chained ? 1 : TRANSITIONS_PER_INVOCATION[fn];
}

/**
 * Outcomes the state machine routes through one more state before the next task: a Wait
 * (`WaitForCapacity` after a queued Start, `RetryBackoff` after a step to retry) or the
 * `Stopped` end of a job that finished meanwhile.
 */
const ONE_MORE_STATE: ReadonlySet<string> = new Set(['queued', 'retry', 'stopped']);

/** Writes of the `invocation` entry itself: the entry and the job's cost totals, in one transaction. */
const INVOCATION_ENTRY_WRITES = 2;

type EntryCost = Partial<Cost> | undefined;

/** The ledger as a core sees it during one invocation: entries that claim the invocation get its time and states. */
function meteredLedger(
  ledger: Ledger,
  states: number,
  elapsedMs: () => number,
  onClaimed: () => void,
): Ledger {
  const claims = (cost: EntryCost): boolean => (cost?.lambdaInvocations ?? 0) > 0;
  const stamp = (cost: EntryCost): EntryCost =>
    claims(cost)
      ? {
          ...cost,
          lambdaMs: cost?.lambdaMs ?? elapsedMs(),
          stateTransitions: cost?.stateTransitions ?? states,
        }
      : cost;
  const stampEntry = <E extends LedgerEntryInput | undefined>(entry: E): E =>
    entry ? ({ ...entry, cost: stamp(entry.cost) } as E) : entry;
  /** Marks the invocation recorded once the write that carries it succeeded. */
  const track = async <T>(cost: EntryCost, write: Promise<T>): Promise<T> => {
    const result = await write;
    if (claims(cost)) onClaimed();
    return result;
  };
  return {
    ...ledger,
    append: (tenantId, jobId, entry) => track(entry.cost, ledger.append(tenantId, jobId, stampEntry(entry))),
    completeStep: (input) =>
      track(input.cost, ledger.completeStep({ ...input, cost: stamp(input.cost) ?? {} })),
    updateJob: (tenantId, jobId, update) =>
      track(
        update.entry?.cost,
        ledger.updateJob(tenantId, jobId, { ...update, entry: stampEntry(update.entry) }),
      ),
    transition: (tenantId, jobId, to, options) =>
      track(
        options?.entry?.cost,
        ledger.transition(tenantId, jobId, to, options && { ...options, entry: stampEntry(options.entry) }),
      ),
    setWait: (tenantId, jobId, wait, status, entry) =>
      track(entry?.cost, ledger.setWait(tenantId, jobId, wait, status, stampEntry(entry))),
  };
}

/**
 * The `invocation` entry of one invocation of `fn` that ended with `outcome`: the invocation,
 * its states, the entry's own writes. `lambdaMs` is left to the metered ledger (it stamps the
 * time the invocation took when the entry is written). A core writes it itself when it has a
 * job update to make anyway (a queued Start records when it asked), so that both go in one write.
 */
export function invocationEntry(
  fn: StateMachineFunction,
  outcome: string,
  states: number = TRANSITIONS_PER_INVOCATION[fn],
): LedgerEntryInput {
  return {
    type: 'invocation',
    detail: { function: fn, outcome },
    cost: {
      lambdaInvocations: 1,
      stateTransitions: states + (ONE_MORE_STATE.has(outcome) ? 1 : 0),
      dynamoWrites: INVOCATION_ENTRY_WRITES,
    },
  };
}

/** How an invocation ended, for its `invocation` entry. */
function outcomeOf(result: unknown, error: unknown): string {
  if (error !== undefined) return error instanceof Error ? `error:${error.name}` : 'error';
  if (result instanceof Relayed) return 'relayed';
  const outcome = (result as { outcome?: unknown } | null)?.outcome;
  return typeof outcome === 'string' ? outcome : 'done';
}

/**
 * The screenshot an outcome carries (RunStep's page when it asks a person to review), kept on
 * the invocation's own entry, or on a `screenshot` entry when another entry already claimed it.
 */
function screenshotOf(result: unknown): { screenshot: ScreenshotRef; step?: string } | undefined {
  const r = result as { screenshot?: ScreenshotRef; step?: unknown } | null | undefined;
  if (!r || typeof r !== 'object' || !r.screenshot || typeof r.screenshot.key !== 'string') return undefined;
  return { screenshot: r.screenshot, ...(typeof r.step === 'string' ? { step: r.step } : {}) };
}

/**
 * Runs one invocation of `fn` with a metered ledger, and records the invocation when the core
 * did not. A failure to record is logged, never thrown: metering must not fail a job.
 *
 * @example
 * export const handler = middy(async (event: Event) =>
 *   meterInvocation(await engineDeps(), 'RunStep', event, (deps) => runStep(deps, event)),
 * );
 */
export async function meterInvocation<R>(
  deps: EngineDeps,
  fn: StateMachineFunction,
  ref: JobRef,
  core: (deps: EngineDeps) => Promise<R>,
): Promise<R> {
  const started = deps.clock().getTime();
  const elapsedMs = (): number => Math.max(0, deps.clock().getTime() - started);
  let recorded = false;
  const states = statesOf(fn, ref);
  const ledger = meteredLedger(deps.ledger, states, elapsedMs, () => {
    recorded = true;
  });
  let result: R | undefined;
  let error: unknown;
  try {
    result = await core({ ...deps, ledger });
    return result;
  } catch (err) {
    error = err;
    throw err;
  } finally {
    const shot = screenshotOf(result);
    if ((!recorded || shot) && typeof ref?.tenantId === 'string' && typeof ref?.jobId === 'string') {
      const invocation = invocationEntry(fn, outcomeOf(result, error), states);
      // What the invocation found (a probe's finding, a changed page): what a reviewer reads.
      const found = (result as { detail?: unknown } | undefined)?.detail;
      if (typeof found === 'string')
        invocation.detail = { ...invocation.detail, finding: found.slice(0, 500) };
      const entry: LedgerEntryInput = recorded
        ? { type: 'screenshot', detail: invocation.detail, cost: { dynamoWrites: INVOCATION_ENTRY_WRITES } }
        : { ...invocation, cost: { ...invocation.cost, lambdaMs: elapsedMs() } };
      await deps.ledger
        .append(ref.tenantId, ref.jobId, {
          ...entry,
          ...(shot ? { screenshot: shot.screenshot, ...(shot.step ? { step: shot.step } : {}) } : {}),
        })
        .catch((err: unknown) => {
          deps.log.warn('invocation not recorded in the ledger', {
            function: fn,
            jobId: ref.jobId,
            error: err instanceof Error ? err.name : String(err),
          });
        });
    }
  }
}
