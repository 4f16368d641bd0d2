import type { ActionEntryType, RecordedEntry } from '../playbooks/contract.ts';
import { type AgentAction, parseAction } from './actions.ts';

/** One recorded action to replay, by its number: the latest entry for it wins (a heal replaces). */
export interface Planned {
  n: number;
  type: ActionEntryType;
  action: AgentAction;
  /** Where the action came from: the action cache (no model call) or a model's decision. */
  source: 'cache' | 'model';
  /** The cache entry the attempt ran from, for an action that came from (or healed) one. */
  cacheEntry?: string;
  /** Recorded to run exactly as written (see `references.ts`); else its references are resolved from the job. */
  literal?: true;
}

/** The step's record read back: actions to replay, in order, and the answers people gave. */
export function planReplay(record: readonly RecordedEntry[]): { planned: Planned[]; answers: string[] } {
  const byNumber = new Map<number, Planned>();
  const answers: string[] = [];
  for (const e of record) {
    if (e.type === 'answer') {
      answers.push(String(e.detail.answer ?? ''));
      continue;
    }
    const n = Number(e.detail.n);
    const action = parseAction(e.detail.action);
    if (!Number.isInteger(n) || n < 1 || !action) continue;
    const cache = e.detail.cache as { entryId?: unknown } | undefined;
    byNumber.set(n, {
      n,
      type: e.type,
      action,
      source: e.detail.source === 'cache' ? 'cache' : 'model',
      ...(typeof cache?.entryId === 'string' ? { cacheEntry: cache.entryId } : {}),
      ...(e.detail.literal === true ? { literal: true as const } : {}),
    });
  }
  return { planned: [...byNumber.values()].sort((a, b) => a.n - b.n), answers };
}
