import { render } from '../playbooks/template.ts';
import { type AgentAction, parseAction } from './actions.ts';
import { type JobValues, type Scalar, valueScope, withValuePlaceholders } from './cache/placeholders.ts';

/**
 * What the ledger records of an agent's action is what a replay types. The job's values in an
 * action are recorded as references (`{{inputs.phone}}`, `{{evidence.step.key}}`) and resolved
 * again from the job when the action runs, fresh or replayed, so the record never depends on a
 * redaction pass and a sensitive input is never in it. Secrets stay `{{secret:name}}`
 * placeholders, substituted only as the action runs (`execute.ts`).
 */

/** An action as recorded: references for the job's values; `literal` when it must run exactly as written. */
export interface RecordedAction {
  action: AgentAction;
  /** The action holds text no reference can stand for exactly: it runs as recorded, unresolved. */
  literal?: true;
}

/** The action with `edit` applied to each of its texts (a target's name, a value, an option, a URL, a summary, a question). */
export function mapTexts(action: AgentAction, edit: (text: string) => string): AgentAction {
  switch (action.name) {
    case 'click':
      return { name: 'click', target: { ...action.target, name: edit(action.target.name) } };
    case 'fill':
      return {
        name: 'fill',
        target: { ...action.target, name: edit(action.target.name) },
        value: edit(action.value),
      };
    case 'select':
      return {
        name: 'select',
        target: { ...action.target, name: edit(action.target.name) },
        option: edit(action.option),
      };
    case 'check':
      return {
        name: 'check',
        target: { ...action.target, name: edit(action.target.name) },
        checked: action.checked,
      };
    case 'goto':
      return { name: 'goto', url: edit(action.url) };
    case 'done':
      return { name: 'done', summary: edit(action.summary) };
    case 'ask_person':
      return { name: 'ask_person', question: edit(action.question) };
    default:
      return action;
  }
}

/** The action with the job's references filled in (`{{inputs.x}}`, `{{evidence.s.k}}`); any other stays as written. */
export function resolveAction(action: AgentAction, job: JobValues): AgentAction {
  const scope = valueScope(job);
  return mapTexts(action, (text) => render(text, scope, 'keep'));
}

/** References to the job's values the action holds that the job has no value for (after resolving). */
export function unresolvedReferences(action: AgentAction, job: JobValues): string[] {
  const resolved = JSON.stringify(resolveAction(action, job));
  return [...new Set(resolved.match(/\{\{\s*(?:inputs|evidence)\.[^{}]*\}\}/g) ?? [])];
}

/**
 * A cached action list for this job: each action as stored (with its references) and as it runs
 * (resolved from the job's inputs and evidence); `undefined` when an action does not parse or
 * names a value this job does not have (the entry is not this job's).
 */
export function cachedForJob(
  cached: readonly Record<string, unknown>[],
  job: JobValues,
): { stored: AgentAction; resolved: AgentAction }[] | undefined {
  const actions: { stored: AgentAction; resolved: AgentAction }[] = [];
  for (const item of cached) {
    const stored = parseAction(item);
    if (!stored || unresolvedReferences(stored, job).length > 0) return undefined;
    actions.push({ stored, resolved: resolveAction(stored, job) });
  }
  return actions;
}

/**
 * The action as the ledger records it: each of the job's values (at any depth) replaced by its
 * reference, checked to resolve back to exactly what the action means now; else the resolved
 * action, marked `literal`.
 */
export function toRecorded(
  action: AgentAction,
  values: readonly [string, Scalar][],
  job: JobValues,
): RecordedAction {
  const meant = resolveAction(action, job);
  const referenced = mapTexts(action, (text) =>
    outsidePlaceholders(text, (t) => withValuePlaceholders(t, values)),
  );
  if (JSON.stringify(resolveAction(referenced, job)) === JSON.stringify(meant)) return { action: referenced };
  return { action: meant, literal: true };
}

/** `edit` applied to the parts of `text` outside its placeholders (`{{secret:phone}}` stays whole). */
function outsidePlaceholders(text: string, edit: (part: string) => string): string {
  return text
    .split(/(\{\{[^{}]*\}\})/)
    .map((part, i) => (i % 2 === 1 ? part : edit(part)))
    .join('');
}

/** Marks an older ledger's redaction left in a value: such an action cannot be replayed exactly. */
const MASKED = /\[card \*{4}\d{4}\]|\[redacted\]/;

/** Does the action hold a value an older ledger masked (a phone number stored as `[card ****4567]`)? */
export function holdsMask(action: AgentAction): boolean {
  let masked = false;
  mapTexts(action, (text) => {
    if (MASKED.test(text)) masked = true;
    return text;
  });
  return masked;
}
