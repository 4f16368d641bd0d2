/**
 * The playbooks' one template language, for the declarative form and agent steps alike:
 * `{{inputs.address.city}}`, `{{evidence.create-report.reportId}}`, `{{idempotencyKey}}`,
 * `{{jobId}}`, `{{stepId}}`, `{{tenantId}}`, with filters (`{{inputs.q | url}}`: url, lower,
 * upper, trim). Secrets are only ever referenced, `{{credentials.password}}`, and only where a
 * declarative field is filled: they are fetched from the credential store at that moment and go
 * nowhere else (not into URLs, checks, evidence or a model's prompt). An agent step's
 * `{{secret:name}}` is no reference: it is the placeholder a model types, left as written.
 */
import type { Evidence } from '../ledger/types.ts';
import type { StepContext } from './contract.ts';

/** What references are filled from: a step's context is one; the action cache builds one from a job's values. */
export interface TemplateScope {
  inputs: unknown;
  evidence(stepId: string): Evidence | undefined;
  idempotencyKey?: string;
  jobId?: string;
  stepId?: string;
  tenantId?: string;
}

/**
 * What a reference with no value becomes: `empty` (a declarative step: an optional input leaves
 * its field empty) or `keep`, the reference as written (an agent's goal: a visible gap, never an
 * empty string a model would act on; the action cache: an entry that is not this job's).
 */
export type Missing = 'empty' | 'keep';

export const TEMPLATE_ROOTS = [
  'inputs',
  'evidence',
  'idempotencyKey',
  'jobId',
  'stepId',
  'tenantId',
  'credentials',
] as const;
export const FILTERS = ['url', 'lower', 'upper', 'trim'] as const;
const CREDENTIAL_FIELDS = ['username', 'password'] as const;

/** One `{{ ... }}` reference: its path and filters. */
export interface Reference {
  path: string[];
  filters: string[];
  /** The reference as written, for messages. */
  text: string;
}

const REF = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The references a template holds. */
export function referencesOf(template: string): Reference[] {
  const out: Reference[] = [];
  for (const m of template.matchAll(REF)) {
    const [expr = '', ...filters] = (m[1] ?? '').split('|').map((s) => s.trim());
    out.push({ path: expr.split('.').filter((p) => p !== ''), filters, text: m[0] });
  }
  return out;
}

/** What is wrong with a reference (undefined when nothing is), without knowing the inputs' schema. */
export function referenceProblem(ref: Reference, allowCredentials: boolean): string | undefined {
  const [root, ...rest] = ref.path;
  if (!root || !(TEMPLATE_ROOTS as readonly string[]).includes(root))
    return `${ref.text}: references start with ${TEMPLATE_ROOTS.join(', ')}`;
  for (const f of ref.filters) {
    if (!(FILTERS as readonly string[]).includes(f))
      return `${ref.text}: unknown filter ${f} (${FILTERS.join(', ')})`;
  }
  if (root === 'credentials') {
    if (!allowCredentials)
      return `${ref.text}: credentials may only fill a field (fill.value), never go into a URL, a check or evidence`;
    if (rest.length !== 1 || !(CREDENTIAL_FIELDS as readonly string[]).includes(rest[0] ?? ''))
      return `${ref.text}: credentials.username or credentials.password`;
  }
  if ((root === 'inputs' || root === 'evidence') && rest.length === 0)
    return `${ref.text}: name a field (${root}.<name>)`;
  if (root === 'evidence' && rest.length < 2) return `${ref.text}: evidence.<step id>.<field>`;
  if (!['inputs', 'evidence', 'credentials'].includes(root) && rest.length > 0)
    return `${ref.text}: ${root} has no fields`;
  return undefined;
}

function applyFilters(value: string, filters: readonly string[]): string {
  let out = value;
  for (const f of filters) {
    if (f === 'url') out = encodeURIComponent(out);
    else if (f === 'lower') out = out.toLowerCase();
    else if (f === 'upper') out = out.toUpperCase();
    else if (f === 'trim') out = out.trim();
  }
  return out;
}

function stringOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function lookup(ctx: TemplateScope, path: readonly string[]): unknown {
  const [root, ...rest] = path;
  let value: unknown;
  if (root === 'inputs') value = ctx.inputs;
  else if (root === 'evidence') value = ctx.evidence(rest.shift() ?? '');
  else if (root === 'idempotencyKey') return ctx.idempotencyKey;
  else if (root === 'jobId') return ctx.jobId;
  else if (root === 'stepId') return ctx.stepId;
  else if (root === 'tenantId') return ctx.tenantId;
  for (const key of rest) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Renders a template without secrets. A missing value (and an agent's `{{secret:name}}`)
 * renders empty, or as written with `missing: 'keep'`. Credentials references are refused when
 * a file is read; here one renders as a missing value, never as the secret.
 */
export function render(template: string, scope: TemplateScope, missing: Missing = 'empty'): string {
  return template.replace(REF, (whole, inner: string) => {
    const [expr = '', ...filters] = inner.split('|').map((s) => s.trim());
    const path = expr.split('.').filter((p) => p !== '');
    const value = path[0] === 'credentials' ? undefined : lookup(scope, path);
    if ((value === undefined || value === null) && missing === 'keep') return whole;
    return applyFilters(stringOf(value), filters);
  });
}

/** Renders a fill value: as {@link render}, with `{{credentials.*}}` fetched for `app` now. */
export async function renderWithSecrets(
  template: string,
  ctx: StepContext,
  app: string,
): Promise<{ value: string; secret: boolean }> {
  if (!referencesOf(template).some((r) => r.path[0] === 'credentials'))
    return { value: render(template, ctx), secret: false };
  const credentials = await ctx.credentials.get(app);
  const value = template.replace(REF, (_m, inner: string) => {
    const [expr = '', ...filters] = inner.split('|').map((s) => s.trim());
    const path = expr.split('.').filter((p) => p !== '');
    if (path[0] === 'credentials') {
      const field =
        path[1] === 'username' ? credentials.username : path[1] === 'password' ? credentials.password : '';
      return applyFilters(field, filters);
    }
    return applyFilters(stringOf(lookup(ctx, path)), filters);
  });
  return { value, secret: true };
}

/** Is a rendered `when` true? Non-empty and not `false`. */
export function truthy(rendered: string): boolean {
  const v = rendered.trim();
  return v !== '' && v.toLowerCase() !== 'false';
}
