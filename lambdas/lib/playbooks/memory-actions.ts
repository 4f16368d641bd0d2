import type { Evidence } from '../ledger/types.ts';
import type { RecordedEntry, StepActions } from './contract.ts';

/**
 * A step's action record kept in memory, for running steps outside the engine (the naive
 * runner of the benchmark, playbook tests): what a step records is read back by the same
 * step, and lost with the process, which is exactly what the engine's ledger avoids.
 *
 * @example
 * const ctx: StepContext = { ...rest, actions: memoryStepActions() };
 */
export function memoryStepActions(
  options: { model?: string; evidence?: Record<string, Evidence> } = {},
): StepActions & { entries: RecordedEntry[] } {
  const entries: RecordedEntry[] = [];
  return {
    entries,
    model: options.model,
    evidence: options.evidence ?? {},
    recorded: () => [...entries],
    record: async (entry) => {
      entries.push({ type: entry.type, detail: entry.detail, at: new Date().toISOString() });
    },
  };
}
