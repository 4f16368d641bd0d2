import type { Evidence } from '../../ledger/types.ts';
import { render, type TemplateScope } from '../../playbooks/template.ts';
import { type AgentAction, parseAction } from '../actions.ts';

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

/** The job's values by placeholder name (`inputs.customerId` -> `C-1003`), longest value first. */
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
  const put = (text: string): string => withPlaceholders(text, values);
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

/** A cached action for this job: its placeholders filled from the job's inputs and evidence (secrets stay placeholders). */
export function instantiate(cached: Record<string, unknown>, values: JobValues): AgentAction | undefined {
  const scope = valueScope(values);
  const fill = (value: unknown): unknown =>
    typeof value === 'string' ? render(value, scope, 'keep') : value;
  const filled: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cached)) filled[k] = k === 'name' ? v : fill(v);
  if (typeof cached.target === 'object' && cached.target !== null) {
    const t = cached.target as Record<string, unknown>;
    filled.target = { role: t.role, name: fill(t.name) };
  }
  const action = parseAction(filled);
  // A placeholder left unfilled (an input this job does not have): the entry is not this job's.
  return action &&
    !JSON.stringify(action).includes('{{inputs.') &&
    !JSON.stringify(action).includes('{{evidence.')
    ? action
    : undefined;
}

/**
 * What of the job's values (and secrets) the serialised entry still holds: empty for an entry
 * that may be written. Values shorter than {@link MIN_EMBEDDED_VALUE} are checked only as a
 * whole argument (they were replaced there).
 */
export function leakedValues(
  actions: readonly AgentAction[],
  values: readonly [string, Scalar][],
  secrets: Readonly<Record<string, string>>,
): string[] {
  const text = JSON.stringify(actions);
  const leaks = values
    .filter(([, v]) => String(v).length >= MIN_EMBEDDED_VALUE && text.includes(String(v)))
    .map(([name]) => name);
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length > 0 && text.includes(value)) leaks.push(`secret:${name}`);
  }
  return leaks;
}

function withPlaceholders(text: string, values: readonly [string, Scalar][]): string {
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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  for (const [k, v] of Object.entries(value)) flatten(`${prefix}.${k}`, v, out);
}
