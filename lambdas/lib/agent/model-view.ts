import { isSecretKey, redactText } from '../redact.ts';

/**
 * What a model may see of a job, in one pass for every text it is shown (the goal, the fields,
 * the history, people's answers, the page's URL and snapshot, a probe's question): the step's
 * secrets and the job's sensitive inputs become placeholders (`{{secret:name}}`,
 * `{{inputs.name}}`), wherever and however they appear (as typed, percent-encoded, form-encoded),
 * then the house redaction (registered secrets, tokens, API keys, card-like numbers). The job's
 * own values stay as they are, though they look like card numbers: a phone number the model
 * typed must read back as typed, or it types it again (and again).
 */
export interface ModelView {
  /** Secret values by placeholder name (`password`, the step's own): `{{secret:name}}`. */
  readonly secrets: Readonly<Record<string, string>>;
  /** Inputs the model never sees, by placeholder name (`inputs.ssn`): `{{inputs.ssn}}`. */
  readonly sensitive: readonly (readonly [string, string])[];
  /** The job's other values (inputs, earlier evidence): never masked as card numbers. */
  readonly values: readonly string[];
}

/** Values this short are left alone: they would replace ordinary words and numbers. */
const MIN_HIDDEN_LENGTH = 4;

/** The forms a value takes in text and URLs: as typed, percent-encoded, form-encoded. */
function formsOf(value: string): string[] {
  const encoded = encodeURIComponent(value);
  return [...new Set([value, encoded, encoded.replace(/%20/g, '+')])];
}

/** Each hidden value (and its encodings) with its placeholder, longest first (none is left in part). */
function hidden(view: ModelView): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, value] of Object.entries(view.secrets)) {
    if (value.length > 0) for (const form of formsOf(value)) out.push([form, `{{secret:${name}}}`]);
  }
  for (const [name, value] of view.sensitive) {
    if (value.length >= MIN_HIDDEN_LENGTH) for (const form of formsOf(value)) out.push([form, `{{${name}}}`]);
  }
  return out.sort((a, b) => b[0].length - a[0].length);
}

function replaceAll(text: string, pairs: readonly [string, string][]): string {
  let out = text;
  for (const [value, placeholder] of pairs) if (out.includes(value)) out = out.split(value).join(placeholder);
  return out;
}

/**
 * `text` with the step's secrets and the job's sensitive inputs as placeholders (no other
 * redaction): what the ledger keeps of what a model chose and saw, where a later read puts the
 * people's redaction on top.
 */
export function withValuesHidden(text: string, view: ModelView): string {
  return replaceAll(text, hidden(view));
}

/** `text` as a model may see it (see {@link ModelView}). */
export function forModel(text: string, view: ModelView): string {
  return redactText(withValuesHidden(text, view), undefined, { keepNumbers: view.values });
}

/**
 * A URL as a model may see it: as {@link forModel}, and when its decoded form (`%xx`, `+`) still
 * holds a hidden value in another encoding, the decoded form with the placeholders, so no
 * encoding lets a value through.
 */
export function urlForModel(url: string, view: ModelView): string {
  const shown = forModel(url, view);
  const pairs = hidden(view);
  for (const decoded of [safeDecode(shown), safeDecode(shown.replace(/\+/g, ' '))]) {
    if (pairs.some(([value]) => decoded.includes(value))) return forModel(decoded, view);
  }
  return shown;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The job's inputs a model must not see, by placeholder name (`inputs.ssn`): those the step
 * names (dot paths, `items.0.sku` for an array's item), and any whose key names a secret
 * (`password`, `token`, `cardNumber`...), at any depth.
 */
export function sensitiveInputs(inputs: unknown, named: readonly string[] = []): [string, string][] {
  const out: [string, string][] = [];
  const walk = (path: string, value: unknown, secret: boolean): void => {
    const marked = secret || named.includes(path.slice('inputs.'.length));
    if (typeof value === 'string' || typeof value === 'number') {
      if (marked && String(value).length > 0) out.push([path, String(value)]);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const parent = path.split('.').at(-1) ?? '';
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value);
    // A key names a secret alone (`password`) or with its parent's (`card.number`).
    for (const [k, v] of entries) {
      const secretKey = isSecretKey(k) || (!Array.isArray(value) && isSecretKey(`${parent}.${k}`));
      walk(`${path}.${k}`, v, marked || secretKey);
    }
  };
  walk('inputs', inputs, false);
  return out;
}

/** `inputs` without the sensitive ones (a template then leaves their references as written). */
export function withoutSensitive(
  inputs: unknown,
  sensitive: readonly (readonly [string, string])[],
): unknown {
  if (sensitive.length === 0) return inputs;
  const copy = structuredClone(inputs) as Record<string, unknown>;
  for (const [name] of sensitive) {
    const path = name.split('.').slice(1);
    let at: unknown = copy;
    for (const key of path.slice(0, -1)) at = (at as Record<string, unknown> | undefined)?.[key];
    if (at && typeof at === 'object') delete (at as Record<string, unknown>)[path.at(-1) ?? ''];
  }
  return copy;
}
