/**
 * An agent write approved on its effect (`approve: 'effect'`): what a person approves is the form
 * the commit would submit (`formEffect`, secrets masked) and the agent's planned actions up to and
 * including that commit, each as the ledger records it (the job's values as references). The
 * engine hashes both, so a page that holds other values and a model that plans other actions
 * change the effect alike.
 */
import type { Locator, Page } from 'playwright-core';
import type { Effect } from '../playbooks/contract.ts';
import { formEffect } from '../playbooks/effect-capture.ts';
import { type AgentAction, targetOf } from './actions.ts';
import { locate } from './execute.ts';

/** Where the prepare stopped: the action that commits, and the effect read just before it. */
export interface ReachedCommit {
  action: AgentAction;
  effect: Effect;
  /**
   * The action ran (its committing request refused, never sent) because it was not the approved
   * commit, or no effect was approved yet; false: the prepare stopped short of it, its effect
   * being the approved one, and the commit runs it.
   */
  ran: boolean;
}

/**
 * The effect of committing with `action` now: the fields of the form its target belongs to (none
 * for a target outside a form, a key or a navigation), the `shows` texts, and the planned action
 * lines (`lines`, ending with this action's). A field whose value holds one of `hidden` (the
 * step's secrets, its sensitive inputs) is marked secret, so its value is never shown or kept.
 */
export async function effectAt(
  page: Page,
  action: AgentAction,
  lines: readonly string[],
  shows: Readonly<Record<string, Locator>>,
  hidden: readonly string[],
): Promise<Effect> {
  const target = targetOf(action);
  const { fields } = await formEffect(target ? locate(page, target) : undefined, shows);
  const secret = (value: string): boolean => hidden.some((h) => h.length > 0 && value.includes(h));
  return {
    fields: fields.map((f) => (f.secret || !secret(f.value) ? f : { ...f, secret: true as const })),
    actions: [...lines],
  };
}
