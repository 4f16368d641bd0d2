import type { AgentAction, Target } from './actions.ts';
import { wasTrimmed } from './observe.ts';
import type {
  Decision,
  Observation,
  Policy,
  ProbeAnswer,
  ProbeDecision,
  ProbeObservation,
} from './policy.ts';

/**
 * `model: local`: a deterministic rule-based policy that really drives the page, so the demo,
 * the tests and the chaos suite run agent steps with no network. It reads the accessibility
 * snapshot and, field by field in the goal's order, fills (or selects, or checks) the control
 * whose accessible name is the field's label until each shows its value; then it clicks the
 * form's submit button; after that click it is done. An agent probe's question it answers by
 * looking for the question's quoted values in the page (see {@link localProbeAnswer}). It costs
 * no tokens. Each decision waits a configurable, simulated latency (default 1.5 s) so
 * benchmarks show a model's time.
 */

/** Default simulated time of one decision, close to a hosted model's. */
export const DEFAULT_LOCAL_LATENCY_MS = 1_500;

/** Names of buttons that submit a form, as the local policy recognises them. */
const SUBMIT = /^(save|submit|send|update|place|store|confirm|continue|pay|apply|create|add)\b/i;

/** One control of the snapshot: role, accessible name, the value it shows, its states. */
export interface Control {
  role: string;
  name: string;
  value: string;
  states: string[];
}

/**
 * A text of the snapshot as the page shows it. Playwright writes a text in double quotes, with
 * YAML's escapes, when it would not read back as that string: one that starts with `+` or `-`,
 * or that YAML would take for a number (`"+4479111234567"`, `"42"`), `yes`/`no`, or one holding
 * `: ` or `#`.
 */
export function unquoted(text: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(text);
  if (!m) return text;
  const escapes: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
  return (m[1] ?? '').replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, e: string) =>
    e.length === 3 ? String.fromCharCode(Number.parseInt(e.slice(1), 16)) : (escapes[e] ?? e),
  );
}

/** The controls of an aria snapshot (Playwright's default YAML form), in page order. */
export function controlsOf(snapshot: string): Control[] {
  const out: Control[] = [];
  for (const line of snapshot.split('\n')) {
    const m = /^\s*- (\w+)(?: "((?:[^"\\]|\\.)*)")?((?: \[[^\]]*\])*)(?::\s?(.*))?$/.exec(line);
    if (!m) continue;
    const [, role = '', name = '', states = '', value = ''] = m;
    out.push({
      role,
      name: name.replace(/\\(.)/g, '$1'),
      value: unquoted(value),
      states: [...states.matchAll(/\[([^\]]*)\]/g)].map((s) => s[1] ?? ''),
    });
  }
  return out;
}

const norm = (s: string): string => s.trim().toLowerCase().replace(/\s+/g, ' ');

/** The next action for a form-filling goal; pure, so tests can call it on a snapshot. */
export function nextLocalAction(observation: Observation): AgentAction {
  const controls = controlsOf(observation.snapshot);
  if (observation.history.some((h) => h.startsWith('click button'))) {
    return { name: 'done', summary: 'the form was filled and submitted' };
  }
  for (const [label, wanted] of Object.entries(observation.fields)) {
    const control = controls.find(
      (c) => norm(c.name) === norm(label) && !['button', 'link', 'heading', 'option'].includes(c.role),
    );
    if (!control) return { name: 'ask_person', question: `I cannot find the field "${label}" on this page.` };
    const target: Target = { role: control.role, name: control.name };
    if (control.role === 'checkbox' || control.role === 'switch' || control.role === 'radio') {
      const want = /^(true|yes|on|1)$/i.test(wanted);
      if (control.states.includes('checked') !== want) return { name: 'check', target, checked: want };
      continue;
    }
    if (control.role === 'combobox' || control.role === 'listbox') {
      if (norm(control.value) !== norm(wanted)) return { name: 'select', target, option: wanted };
      continue;
    }
    if (control.value !== wanted) return { name: 'fill', target, value: wanted };
  }
  const submit = controls.find(
    (c) => c.role === 'button' && SUBMIT.test(c.name) && !c.states.includes('disabled'),
  );
  if (!submit) return { name: 'ask_person', question: 'I filled the form but cannot find how to submit it.' };
  return { name: 'click', target: { role: 'button', name: submit.name } };
}

/** The values a question quotes, in order: `"..."` or `“...”` (the question's templated values go there). */
export function quotedValues(question: string): string[] {
  return [...question.matchAll(/"([^"]+)"|“([^”]+)”/g)]
    .map((m) => (m[1] ?? m[2] ?? '').trim())
    .filter((v) => v !== '');
}

/** The snapshot as text to search: quoted names unescaped, spaces collapsed, lower case. */
function searchable(snapshot: string): string {
  return norm(snapshot.replace(/\\(.)/g, '$1'));
}

/**
 * The texts of the snapshot's nodes, normalised, with how many nodes show each: each line's
 * quoted name (`- heading "Cobalt Cycles"`) and the text after its colon (`- definition: Mei
 * Chen-Ward`).
 */
function nodeTexts(snapshot: string): Map<string, number> {
  const texts = new Map<string, number>();
  for (const line of snapshot.split('\n')) {
    const m = /^\s*-\s+[\w/-]+(?:\s+"((?:[^"\\]|\\.)*)")?(?:\s+\[[^\]]*\])*(?::\s*(.*))?$/.exec(line);
    if (!m) continue;
    const name = m[1]?.replace(/\\(.)/g, '$1');
    const text = m[2] === undefined ? undefined : unquoted(m[2].trim());
    for (const t of new Set([name, text].filter((x): x is string => x !== undefined && x.trim() !== ''))) {
      const key = norm(t);
      texts.set(key, (texts.get(key) ?? 0) + 1);
    }
  }
  return texts;
}

/** Does `text` hold `value` as a whole (not inside a longer word or number)? */
function holds(text: string, value: string): boolean {
  const v = norm(value);
  for (let at = text.indexOf(v); at >= 0; at = text.indexOf(v, at + 1)) {
    const before = text[at - 1] ?? ' ';
    const after = text[at + v.length] ?? ' ';
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true;
  }
  return false;
}

/**
 * The local policy's answer to a probe, by rule: every value the question quotes is on the page
 * -> `done` (each shown whole twice or more -> `duplicate`); some is not -> `absent`, unless the
 * snapshot was trimmed (the value may be further down: `unknown`); a question that quotes
 * nothing, or an empty page -> `unknown`. A value
 * counts as shown only whole (`"Ann"` is not in `Anna`), and as done only as all of one
 * element's text: shown only inside a longer text (`"Ann"` in `Ann (left)`) it is `unknown`,
 * for a person. Pure, so tests call it on a snapshot.
 */
export function localProbeAnswer(observation: ProbeObservation): ProbeAnswer {
  const wanted = quotedValues(observation.question);
  if (wanted.length === 0)
    return { status: 'unknown', reason: 'the question quotes no value to look for on the page' };
  if (observation.snapshot.trim() === '') return { status: 'unknown', reason: 'the page shows nothing' };
  const text = searchable(observation.snapshot);
  const nodes = nodeTexts(observation.snapshot);
  const missing = wanted.filter((v) => !holds(text, v));
  if (missing.length === 0) {
    // Each value must be all of some element's text: "Mei Chen-Ward" inside "Mei Chen-Ward (old)"
    // may be another write's record, so only a person can tell.
    const partial = wanted.filter((v) => !nodes.has(norm(v)));
    if (partial.length > 0)
      return {
        status: 'unknown',
        reason: `${partial.map((v) => JSON.stringify(v)).join(', ')} shown only inside a longer text`,
      };
    // Every value shown whole more than once: the record is there more than once.
    const count = Math.min(...wanted.map((v) => nodes.get(norm(v)) ?? 0));
    if (count >= 2)
      return {
        status: 'duplicate',
        count,
        reason: `the page shows ${wanted.map((v) => JSON.stringify(v)).join(', ')} ${count} times`,
      };
    return {
      status: 'done',
      evidence: wanted.join('; '),
      reason: `the page shows ${wanted.map((v) => JSON.stringify(v)).join(', ')}`,
    };
  }
  const list = missing.map((v) => JSON.stringify(v)).join(', ');
  if (wasTrimmed(observation.snapshot))
    return { status: 'unknown', reason: `${list} not in the part of the page seen (trimmed)` };
  return { status: 'absent', reason: `the page does not show ${list}` };
}

export class LocalPolicy implements Policy {
  readonly spec = 'local';
  readonly #latencyMs: number;
  constructor(options: { latencyMs?: number } = {}) {
    this.#latencyMs = options.latencyMs ?? DEFAULT_LOCAL_LATENCY_MS;
  }

  async decide(observation: Observation): Promise<Decision> {
    if (this.#latencyMs > 0) await new Promise((r) => setTimeout(r, this.#latencyMs));
    return {
      action: nextLocalAction(observation),
      model: 'local',
      tokens: { input: 0, output: 0 },
      simulatedLatencyMs: this.#latencyMs,
    };
  }

  async answerProbe(observation: ProbeObservation): Promise<ProbeDecision> {
    if (this.#latencyMs > 0) await new Promise((r) => setTimeout(r, this.#latencyMs));
    return {
      answer: localProbeAnswer(observation),
      model: 'local',
      tokens: { input: 0, output: 0 },
      simulatedLatencyMs: this.#latencyMs,
    };
  }
}
