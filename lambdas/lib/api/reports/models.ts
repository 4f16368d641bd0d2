import type { LedgerEntry } from '../../ledger/types.ts';

/** One model's share of a report: its agent decisions, tokens and dollars. */
export interface ModelUsage {
  decisions: number;
  /** Calls that failed or were refused after the provider counted their tokens (in the tokens and dollars too). */
  failedCalls: number;
  inputTokens: number;
  outputTokens: number;
  usd: number;
}

const DECISION_ENTRIES: ReadonlySet<string> = new Set([
  'action-chosen',
  'action-healed',
  'action-refused',
  'probe-answered',
  'model-call-failed',
]);

/**
 * Model cost split by model: every agent decision (an `action-chosen`, `action-healed` or
 * `action-refused` entry, or an agent probe's `probe-answered`: one model call each; an action
 * from the action cache is none) adds its tokens and the dollars it was priced
 * at when spent to the model that made it. A call that failed after the provider counted its
 * tokens (`model-call-failed`) adds them as well, and counts as a failed call. Tokens a browser provider reports for a session
 * are not a model's decision and stay in the report's `modelUsd` total only.
 */
export function modelUsageOf(
  entries: Iterable<LedgerEntry>,
  into: Record<string, ModelUsage> = {},
): Record<string, ModelUsage> {
  for (const e of entries) {
    if (!DECISION_ENTRIES.has(e.type)) continue;
    // An action served by the action cache was no model's decision (and cost none).
    if (e.detail?.source === 'cache') continue;
    const model = typeof e.detail?.model === 'string' ? e.detail.model : 'unknown';
    const usage = (e.detail?.usage ?? {}) as { input?: unknown; output?: unknown };
    into[model] ??= { decisions: 0, failedCalls: 0, inputTokens: 0, outputTokens: 0, usd: 0 };
    const row = into[model];
    if (e.type === 'model-call-failed') row.failedCalls += 1;
    else row.decisions += 1;
    row.inputTokens += typeof usage.input === 'number' ? usage.input : 0;
    row.outputTokens += typeof usage.output === 'number' ? usage.output : 0;
    row.usd = Number((row.usd + (e.cost?.modelUsd ?? 0)).toFixed(12));
  }
  return into;
}
