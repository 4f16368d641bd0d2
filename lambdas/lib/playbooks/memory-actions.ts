import type { Evidence } from '../ledger/types.ts';
import type { RecordedEntry, StepActions, StepCache } from './contract.ts';

/**
 * A step's action record kept in memory, for running steps outside the engine (the naive
 * runner of the benchmark, playbook tests): what a step records is read back by the same
 * step, and lost with the process, which is exactly what the engine's ledger avoids.
 *
 * @example
 * const ctx: StepContext = { ...rest, actions: memoryStepActions() };
 */
export function memoryStepActions(
  options: { model?: string; evidence?: Record<string, Evidence>; cache?: StepCache } = {},
): StepActions & { entries: RecordedEntry[] } {
  const entries: RecordedEntry[] = [];
  return {
    entries,
    model: options.model,
    cache: options.cache ?? NO_STEP_CACHE,
    evidence: options.evidence ?? {},
    recorded: () => [...entries],
    record: async (entry) => {
      entries.push({ type: entry.type, detail: entry.detail, at: new Date().toISOString() });
    },
  };
}

/** A cache that holds nothing and keeps nothing (a step run outside the engine, a read-only context). */
export const NO_STEP_CACHE: StepCache = Object.freeze({
  lookup: async () => undefined,
  serving: () => undefined,
  offer: () => undefined,
});
