import type { Evidence } from '../ledger/types.ts';
import type { ModelCallInput, ProbeAnswerInput, RecordedEntry, StepActions, StepCache } from './contract.ts';

/**
 * A step's action record kept in memory, for running steps outside the engine (the naive
 * runner of the benchmark, playbook tests): what a step records is read back by the same
 * step, and lost with the process, which is exactly what the engine's ledger avoids. Agent
 * probes' answers are kept apart, in `probeAnswers`, and failed but paid calls in `failedCalls`.
 *
 * @example
 * const ctx: StepContext = { ...rest, actions: memoryStepActions() };
 */
export function memoryStepActions(
  options: { model?: string; evidence?: Record<string, Evidence>; cache?: StepCache } = {},
): StepActions & {
  entries: RecordedEntry[];
  probeAnswers: ProbeAnswerInput[];
  failedCalls: ModelCallInput[];
} {
  const entries: RecordedEntry[] = [];
  const probeAnswers: ProbeAnswerInput[] = [];
  const failedCalls: ModelCallInput[] = [];
  return {
    entries,
    probeAnswers,
    failedCalls,
    model: options.model,
    cache: options.cache ?? NO_STEP_CACHE,
    evidence: options.evidence ?? {},
    recorded: () => [...entries],
    record: async (entry) => {
      entries.push({ type: entry.type, detail: entry.detail, at: new Date().toISOString() });
    },
    recordProbeAnswer: async (entry) => {
      probeAnswers.push(entry);
    },
    recordFailedCall: async (entry) => {
      failedCalls.push(entry);
    },
  };
}

/** A cache that holds nothing and keeps nothing (a step run outside the engine, a read-only context). */
export const NO_STEP_CACHE: StepCache = Object.freeze({
  lookup: async () => undefined,
  serving: () => undefined,
  offer: () => undefined,
});
