/**
 * HTML for the console, escaped by construction: {@link html} escapes every interpolated value
 * (ledger texts, evidence, inputs, ids) unless it is itself `html`, so page code cannot forget
 * to escape; attributes are always quoted in the templates.
 */

/** A piece of markup that is already safe. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text made safe for an element's content or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * The tagged template of every page: `html\`<td>${entry.detail}</td>\`` escapes the detail;
 * arrays are joined; `undefined`, `null` and `false` render nothing.
 *
 * @example
 * html`<p>${'<script>'}</p>`.value; // '<p>&lt;script&gt;</p>'
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** A value as compact, readable text (evidence and details are JSON-like). */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
