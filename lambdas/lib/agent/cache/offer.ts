import type { ActionCacheKey, CacheOffer } from '../../playbooks/contract.ts';
import type { AgentAction } from '../actions.ts';
import { generalise, leakedValues, type Scalar } from './placeholders.ts';

/** The step's record in force, read for the cache (the shape `planReplay` gives). */
interface PlannedAction {
  type: string;
  action: AgentAction;
  source: 'cache' | 'model';
}

/**
 * What a step that ended on `done` offers the cache: its actions in order with the job's
 * values replaced by placeholders, or why it offers nothing. Not cached: a refused action or a
 * person's question (the path depended on this job), a target named by the job's data, and
 * any list that would still hold an input value or a secret after the replacement (checked
 * on the serialised list, the very text that would be stored).
 */
export function offerFrom(
  planned: readonly PlannedAction[],
  job: {
    key: ActionCacheKey;
    goalTemplate: string;
    values: readonly [string, Scalar][];
    secrets: Readonly<Record<string, string>>;
    served: string | undefined;
  },
): CacheOffer | { skipped: string } {
  if (planned.length === 0) return { skipped: 'no actions' };
  if (planned.some((p) => p.type === 'action-refused')) return { skipped: 'an action was refused' };
  const actions: AgentAction[] = [];
  for (const p of planned) {
    const general = generalise(p.action, job.values);
    if (!general) {
      return {
        skipped:
          p.action.name === 'ask_person' ? 'the step asked a person' : 'a target is named by the job data',
      };
    }
    actions.push(general);
  }
  const leaks = leakedValues(actions, job.values, job.secrets);
  if (leaks.length > 0) return { skipped: `the actions would hold ${leaks.join(', ')}` };
  return {
    key: job.key,
    actions: actions.map((a) => ({ ...a })),
    goalTemplate: job.goalTemplate,
    ...(job.served ? { served: job.served } : {}),
    // Served, but some action was chosen by a model (a heal, or the list ran out): the entry changes.
    healed: job.served !== undefined && planned.some((p) => p.source !== 'cache'),
  };
}
