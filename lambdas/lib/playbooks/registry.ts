/** The playbooks that ship with the Lambdas, by `name@version`. */
import { checkoutPlaybook } from './checkout/index.ts';
import type { Playbook } from './contract.ts';
import { crmContactAgentPlaybook } from './crm-agent/index.ts';
import { crmBillingSyncPlaybook } from './crm-billing-sync/index.ts';
import { UnknownPlaybookError } from './errors.ts';

const PLAYBOOKS: ReadonlyMap<string, Playbook> = new Map<string, Playbook>(
  [checkoutPlaybook, crmBillingSyncPlaybook, crmContactAgentPlaybook].map((p) => [p.id, p]),
);

/**
 * The playbook registered as `id` (`name@version`).
 * @throws UnknownPlaybookError naming the known ids.
 * @example getPlaybook('checkout@1').steps.length // 14
 */
export function getPlaybook(id: string): Playbook {
  const playbook = PLAYBOOKS.get(id);
  if (!playbook) throw new UnknownPlaybookError(id, [...PLAYBOOKS.keys()]);
  return playbook;
}

/** Every registered playbook, in registration order. */
export function listPlaybooks(): Playbook[] {
  return [...PLAYBOOKS.values()];
}
