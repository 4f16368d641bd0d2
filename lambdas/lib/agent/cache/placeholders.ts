import type { Evidence } from '../../ledger/types.ts';
import type { TemplateScope } from '../../playbooks/template.ts';
import type { AgentAction } from '../actions.ts';

/**
 * A cached action holds placeholders where a job's values were: `{{inputs.x}}` and
 * `{{evidence.step.key}}` (filled in again for the next job) and `{{secret:name}}` (as the
 * step always records them). An action list that would still hold a value is not cached.
 */

export type Scalar = string | number | boolean;

/** A job's values: its inputs and the evidence of its verified steps, by step id. */
export interface JobValues {
  inputs: unknown;
  evidence: Readonly<Record<string, Evidence>>;
}

/**
 * A job's values as templates see them: inputs and evidence, the values a cached action holds
 * placeholders for. An agent's goal and fields are filled from this alone, so `{{idempotencyKey}}`
 * and the other ids stay as written: one job's key must never be cached for the next.
 */
export function valueScope(values: JobValues): TemplateScope {
  return { inputs: values.inputs, evidence: (step) => values.evidence[step] };
}

/** Values shorter than this are only replaced where a whole argument equals them (a "1" is in too many strings). */
export const MIN_EMBEDDED_VALUE = 4;

/**
 * The job's values by placeholder name (`inputs.customerId` -> `C-1003`), longest value first, at
 * any depth: an array's items by their index (`inputs.items.0.sku`), so no value of a list escapes
 * its placeholder.
 */
export function valuesOf(inputs: unknown, evidence: Readonly<Record<string, Evidence>>): [string, Scalar][] {
  const out: [string, Scalar][] = [];
  flatten('inputs', inputs, out);
  flatten('evidence', evidence, out);
  return out.sort((a, b) => String(b[1]).length - String(a[1]).length);
}

/**
 * The action with the job's values replaced by placeholders, or undefined when it cannot be
 * cached: a person's question (its answer was this job's), or a target whose name holds part
 * of a value (a target chosen by the data, which another job's data would not name).
 */
export function generalise(
  action: AgentAction,
  values: readonly [string, Scalar][],
): AgentAction | undefined {
  const put = (text: string): string => withValuePlaceholders(text, values);
  if (action.name === 'ask_person') return undefined;
  if ('target' in action) {
    const whole = values.find(([, v]) => String(v) === action.target.name);
    if (!whole && holdsValue(action.target.name, values)) return undefined;
    const target = { role: action.target.role, name: whole ? `{{${whole[0]}}}` : action.target.name };
    switch (action.name) {
      case 'fill':
        return { name: 'fill', target, value: put(action.value) };
      case 'select':
        return { name: 'select', target, option: put(action.option) };
      case 'check':
        return { name: 'check', target, checked: action.checked };
      default:
        return { name: 'click', target };
    }
  }
  switch (action.name) {
    case 'goto':
      return { name: 'goto', url: put(action.url) };
    case 'done':
      return { name: 'done', summary: put(action.summary) };
    default:
      return action;
  }
}

/**
 * What of the job's values (and secrets) the entry still holds: empty for an entry that may be
 * written. Every text of every action is scanned (a target's name, a value, an option, a URL, a
 * summary; not its kind, role, key name or a checkbox's state), placeholders taken out, for
 * every value of the job at any depth: values of {@link MIN_EMBEDDED_VALUE} characters or more
 * anywhere in a text, shorter ones (2 or 3 characters) as a whole word or number of it. A value
 * of one character cannot be told apart from a page's own text and is checked as a whole
 * argument only (it was replaced there).
 */
export function leakedValues(
  actions: readonly AgentAction[],
  values: readonly [string, Scalar][],
  secrets: Readonly<Record<string, string>>,
): string[] {
  const texts = actions.flatMap(actionTexts).map((t) => t.replace(PLACEHOLDER, ' '));
  const holds = (value: string): boolean =>
    value.length >= MIN_EMBEDDED_VALUE
      ? texts.some((t) => t.includes(value))
      : value.length > 1
        ? texts.some((t) => wholeWord(t, value))
        : texts.some((t) => t === value);
  const leaks = values.filter(([, v]) => holds(String(v))).map(([name]) => name);
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length > 0 && texts.some((t) => t.includes(value))) leaks.push(`secret:${name}`);
  }
  return [...new Set(leaks)];
}

/** A placeholder: `{{inputs.x}}`, `{{evidence.s.k}}`, `{{secret:name}}`. */
const PLACEHOLDER = /\{\{[^{}]*\}\}/g;

/** The texts of an action: what a page or a job may have put in it (not its kind, a role, a key or a state). */
export function actionTexts(action: AgentAction): string[] {
  switch (action.name) {
    case 'click':
      return [action.target.name];
    case 'fill':
      return [action.target.name, action.value];
    case 'select':
      return [action.target.name, action.option];
    case 'check':
      return [action.target.name];
    case 'goto':
      return [action.url];
    case 'done':
      return [action.summary];
    case 'ask_person':
      return [action.question];
    default:
      return [];
  }
}

/** Does `text` hold `value` as a whole word or number (not inside a longer one)? */
function wholeWord(text: string, value: string): boolean {
  for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) {
    const before = text[at - 1] ?? ' ';
    const after = text[at + value.length] ?? ' ';
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true;
  }
  return false;
}

/**
 * `text` with the job's values as placeholders: a text equal to a value becomes its placeholder
 * (`{{inputs.phone}}`), and values of {@link MIN_EMBEDDED_VALUE} characters or more inside it too.
 */
export function withValuePlaceholders(text: string, values: readonly [string, Scalar][]): string {
  const whole = values.find(([, v]) => String(v) === text);
  if (whole) return `{{${whole[0]}}}`;
  let out = text;
  for (const [name, v] of values) {
    const value = String(v);
    if (value.length >= MIN_EMBEDDED_VALUE) out = out.split(value).join(`{{${name}}}`);
  }
  return out;
}

function holdsValue(text: string, values: readonly [string, Scalar][]): boolean {
  return values.some(([, v]) => String(v).length >= MIN_EMBEDDED_VALUE && text.includes(String(v)));
}

function flatten(prefix: string, value: unknown, out: [string, Scalar][]): void {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (String(value).length > 0) out.push([prefix, value]);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  // An array's items by index: `inputs.items.0.sku` (the templates read `.0` as the first item).
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [k, v] of entries) flatten(`${prefix}.${k}`, v, out);
}
