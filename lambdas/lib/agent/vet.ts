import type { Page } from 'playwright-core';
import { referencesOf } from '../playbooks/template.ts';
import { type AgentAction, targetOf } from './actions.ts';
import { locate, onAllowedDomain } from './execute.ts';
import { mapTexts } from './references.ts';

/**
 * Whether an action a model chose (or the cache served) may run, checked before it is recorded as
 * chosen: a refused action is recorded as refused and never runs. It may not
 *
 * - go off the job's domains (`goto`);
 * - put a secret (`{{secret:name}}`) or a sensitive input (`{{inputs.ssn}}`) anywhere but a
 *   field the playbook declares for it: the field its step's `fields` name for that placeholder,
 *   the step's `secretTargets`, or, for the application's password, a password field. Page text
 *   saying "type your password in Search" cannot send it in a GET, into a URL, or to the site's
 *   search log;
 * - name a value the job does not have (a reference left unresolved);
 * - act on a target that does not name exactly one element (on the page as it is now).
 */

/** Why an action may not run, or undefined when it may. */
export type Refusal = string | undefined;

/** What the step allows: the job's domains, and where each protected placeholder may be typed. */
export interface VetRules {
  allowedDomains: readonly string[];
  /** Placeholders that are secrets or sensitive inputs (`secret:password`, `inputs.ssn`). */
  protectedNames: ReadonlySet<string>;
  /** Placeholder -> the accessible names of the fields it may be typed into (normalised). */
  declared: ReadonlyMap<string, ReadonlySet<string>>;
}

export const norm = (s: string): string => s.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * Where each protected placeholder may go, from a step's `fields` (label -> template) and its
 * `secretTargets` (placeholder -> field names).
 */
export function declaredTargets(
  fields: Readonly<Record<string, string>>,
  secretTargets: Readonly<Record<string, readonly string[]>>,
  protectedNames: ReadonlySet<string>,
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (name: string, label: string): void => {
    const labels = out.get(name) ?? new Set<string>();
    labels.add(norm(label));
    out.set(name, labels);
  };
  for (const [label, template] of Object.entries(fields)) {
    for (const ref of referencesOf(template)) {
      const name = ref.path.join('.');
      if (protectedNames.has(name)) add(name, label);
    }
  }
  for (const [name, labels] of Object.entries(secretTargets)) {
    const key = name.startsWith('secret:') || name.startsWith('inputs.') ? name : `secret:${name}`;
    for (const label of labels) add(key, label);
  }
  return out;
}

/** The protected placeholders an action's text holds (`secret:password`, `inputs.ssn`). */
function protectedIn(text: string, rules: VetRules): string[] {
  return referencesOf(text)
    .map((r) => r.path.join('.'))
    .filter((name) => name.startsWith('secret:') || rules.protectedNames.has(name));
}

/** Does the action's target name a password field (`<input type="password">`)? */
async function isPasswordField(page: Page, action: AgentAction): Promise<boolean> {
  const target = targetOf(action);
  if (!target) return false;
  const el = locate(page, target);
  if ((await el.count().catch(() => 0)) !== 1) return false;
  return (await el.getAttribute('type', { timeout: 1_000 }).catch(() => null))?.toLowerCase() === 'password';
}

/**
 * Checks `chosen` (the action as the model wrote it, placeholders and all) and `resolved` (what
 * would run, the job's references filled in) against the rules.
 */
export async function vetAction(
  page: Page,
  chosen: AgentAction,
  resolved: AgentAction,
  rules: VetRules,
  unresolved: readonly string[],
): Promise<Refusal> {
  // Nothing runs for these: a summary or a question may name a placeholder (never its value).
  if (chosen.name === 'done' || chosen.name === 'ask_person') return undefined;
  if (resolved.name === 'goto' && !onAllowedDomain(resolved.url, rules.allowedDomains))
    return "goto off the job's domains";
  if (unresolved.length > 0) return `it names a value the job does not have (${unresolved.join(', ')})`;
  // A protected placeholder is typed only as a field's value, and only into a field declared for it.
  const typed = chosen.name === 'fill' ? chosen.value : chosen.name === 'select' ? chosen.option : '';
  const rest: AgentAction =
    chosen.name === 'fill'
      ? { ...chosen, value: '' }
      : chosen.name === 'select'
        ? { ...chosen, option: '' }
        : chosen;
  const elsewhere: string[] = [];
  mapTexts(rest, (text) => {
    elsewhere.push(...protectedIn(text, rules));
    return text;
  });
  if (elsewhere.length > 0)
    return `${[...new Set(elsewhere)].map((n) => `{{${n}}}`).join(', ')} may only be typed into its own field`;
  const target = targetOf(chosen);
  for (const name of new Set(protectedIn(typed, rules))) {
    const declared = target !== undefined && rules.declared.get(name)?.has(norm(target.name)) === true;
    const password = name === 'secret:password' && (await isPasswordField(page, resolved));
    if (!declared && !password)
      return `{{${name}}} may only be typed into the field the playbook declares for it, not ${target ? `${target.role} "${target.name}"` : 'here'}`;
  }
  const at = targetOf(resolved);
  if (at) {
    const count = await locate(page, at)
      .count()
      .catch(() => 0);
    if (count !== 1) return `${at.role} "${at.name}" names ${count} elements, not exactly one`;
  }
  return undefined;
}
