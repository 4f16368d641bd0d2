import type { Cost } from '../ledger/types.ts';

/**
 * What an agent step's actions cost, counted from its ledger entries (each action entry says
 * where its action came from and what it cost). Honest by construction: a cached action
 * counts as served only in the record the step verified with; the cached actions of an
 * attempt that failed are counted as a failed replay (a miss), never as a model call saved.
 */

/** The entries the counters read (a ledger entry, or one an invocation just wrote). */
export interface CountedEntry {
  type: string;
  step?: string;
  detail?: Record<string, unknown>;
  cost?: Partial<Cost>;
}

export interface AgentCounters {
  /** Calls a model answered (chosen, healed, refused, a probe's answers, calls that failed after counting tokens), failed attempts' included: each was paid for. */
  modelCalls: number;
  /** Actions served by the action cache in the record the step verified with. */
  cachedActions: number;
  /** Actions healed (a model call each, counted in `modelCalls` too). */
  heals: number;
  /** Cached actions of attempts that did not verify: a miss, not a saving. */
  failedReplayActions: number;
  /** Model tokens, input and output together (not called `tokens`: the ledger masks any key named like a token). */
  usage: number;
  modelUsd: number;
}

/** One agent step's counters and what the cache did for it. */
export interface StepAgentCounters extends AgentCounters {
  /**
   * `hit`: verified with every action from the cache; `healed`: from the cache, with a model
   * choosing some; `miss`: verified with a model's actions (a failed replay included);
   * `pending`: not verified (yet).
   */
  cache: 'hit' | 'healed' | 'miss' | 'pending';
}

const DECISIONS: ReadonlySet<string> = new Set(['action-chosen', 'action-healed', 'action-refused']);

export const ZERO_AGENT_COUNTERS: Readonly<AgentCounters> = Object.freeze({
  modelCalls: 0,
  cachedActions: 0,
  heals: 0,
  failedReplayActions: 0,
  usage: 0,
  modelUsd: 0,
});

/** Counters of every step with action entries, by step id, in the order they ran. */
export function agentCountersByStep(entries: Iterable<CountedEntry>): Record<string, StepAgentCounters> {
  const out: Record<string, StepAgentCounters> = {};
  /** Per step: cached actions in the record in force (cleared by a failed attempt), and whether a model chose any. */
  const open = new Map<string, { cached: number; byModel: number }>();
  for (const e of entries) {
    const step = e.step;
    if (!step) continue;
    const segment = open.get(step) ?? { cached: 0, byModel: 0 };
    if (e.type === 'probe-answered' || e.type === 'model-call-failed') {
      // A probe's answer, or a call that failed after its tokens were counted: a paid call, and
      // no part of the action record the cache reads.
      out[step] ??= { ...ZERO_AGENT_COUNTERS, cache: 'pending' };
      const c = out[step];
      c.modelCalls++;
      c.usage += e.cost?.modelTokens ?? 0;
      c.modelUsd = Number((c.modelUsd + (e.cost?.modelUsd ?? 0)).toFixed(12));
    } else if (DECISIONS.has(e.type)) {
      out[step] ??= { ...ZERO_AGENT_COUNTERS, cache: 'pending' };
      const c = out[step];
      if (e.detail?.source === 'cache') {
        segment.cached++;
      } else {
        c.modelCalls++;
        segment.byModel++;
        if (e.type === 'action-healed') c.heals++;
        c.usage += e.cost?.modelTokens ?? 0;
        c.modelUsd = Number((c.modelUsd + (e.cost?.modelUsd ?? 0)).toFixed(12));
      }
      open.set(step, segment);
    } else if (
      e.type === 'step-failed' ||
      (e.type === 'reconciled' && e.detail?.failedAttempt !== undefined)
    ) {
      const c = out[step];
      if (c) c.failedReplayActions += segment.cached;
      open.set(step, { cached: 0, byModel: 0 });
    } else if (e.type === 'step-completed' && out[step]) {
      const c = out[step];
      c.cachedActions = segment.cached;
      c.cache = segment.cached === 0 ? 'miss' : segment.byModel === 0 ? 'hit' : 'healed';
    }
  }
  return out;
}

/** The job's (or a report's) totals: the steps' counters added up. */
export function sumAgentCounters(
  steps: Iterable<AgentCounters>,
  into: AgentCounters = { ...ZERO_AGENT_COUNTERS },
): AgentCounters {
  for (const s of steps) {
    into.modelCalls += s.modelCalls;
    into.cachedActions += s.cachedActions;
    into.heals += s.heals;
    into.failedReplayActions += s.failedReplayActions;
    into.usage += s.usage;
    into.modelUsd = Number((into.modelUsd + s.modelUsd).toFixed(12));
  }
  return into;
}
