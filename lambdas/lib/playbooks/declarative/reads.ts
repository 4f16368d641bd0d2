/**
 * Reading values off a page (or off one record a probe found) for checks and evidence, and
 * comparing them the ways forms need (spaces, case, digits).
 */
import type { Locator, Page } from 'playwright-core';
import type { Evidence } from '../../ledger/types.ts';
import type { StepContext } from '../contract.ts';
import { pageUrl } from '../page.ts';
import { describeTarget, locateAll, visibleTarget } from '../target.ts';
import { render, truthy } from '../template.ts';
import type { Check, EvidenceField, Read } from './schema.ts';

/** How long a read waits for its element (the evidence timeout is spent once, on the page's first sign). */
const READ_TIMEOUT_MS = 1_000;

type Root = Page | Locator;

/** How reads look at the page: waiting for an element (a verify, a probe), or as it is now (a check). */
export interface ReadOptions {
  /** How long a read waits for its element to show (default {@link READ_TIMEOUT_MS}; 0: one look). */
  waitMs?: number;
}

/** The first group of `pattern` in `text` (or its whole match), or undefined when it does not match. */
function matched(pattern: string, text: string): string | undefined {
  const m = new RegExp(pattern).exec(text);
  return m ? (m[1] ?? m[0]) : undefined;
}

/** A value read, or undefined when the page does not have it. */
export async function readValue(
  page: Page,
  root: Root,
  read: Read,
  ctx: StepContext,
  options: ReadOptions = {},
): Promise<string | number | boolean | null | undefined> {
  if ('const' in read) return read.const;
  if ('template' in read) return render(read.template, ctx);
  if ('url' in read) {
    const url = pageUrl(page);
    return matched(
      read.url,
      read.query ? `${url?.pathname ?? ''}${url?.search ?? ''}` : (url?.pathname ?? ''),
    );
  }
  const r = (text: string): string => render(text, ctx);
  if (read.count) return read.target ? (await locateAll(root, read.target, r)).length : 0;
  let el: Locator | undefined;
  if (read.target) el = await visibleTarget(root, read.target, options.waitMs ?? READ_TIMEOUT_MS, r);
  else if (root !== page) el = root as Locator;
  if (!el) return undefined;
  let text: string | undefined;
  if (read.attr) text = (await el.getAttribute(read.attr).catch(() => null)) ?? undefined;
  else if (read.value) text = await el.inputValue().catch(() => undefined);
  else text = ((await el.textContent().catch(() => null)) ?? undefined)?.replace(/\s+/g, ' ').trim();
  return text !== undefined && read.match !== undefined ? matched(read.match, text) : text;
}

function typed(
  value: string | number | boolean | null,
  type: EvidenceField['type'],
): string | number | boolean | null | undefined {
  if (value === null || type === undefined) return value;
  const text = String(value).trim();
  if (type === 'string') return text;
  if (type === 'integer') return /^-?\d+$/.test(text) ? Number(text) : undefined;
  if (type === 'number') return text !== '' && Number.isFinite(Number(text)) ? Number(text) : undefined;
  if (text === 'true') return true;
  if (text === 'false') return false;
  return undefined;
}

/** The evidence `fields` describe, or null when a required one is missing (or not of its type). */
export async function readEvidence(
  page: Page,
  root: Root,
  fields: Record<string, EvidenceField>,
  ctx: StepContext,
  options: ReadOptions = {},
): Promise<Evidence | null> {
  const out: Evidence = {};
  for (const [name, field] of Object.entries(fields)) {
    const raw = await readValue(page, root, field, ctx, options);
    const value = raw === undefined ? undefined : typed(raw, field.type);
    if (value === undefined) {
      if (!field.optional) return null;
      out[name] = null;
    } else out[name] = value;
  }
  return out;
}

/** `a` and `b` are the same under `compare`. */
export function sameUnder(compare: Check['compare'], a: string, b: string): boolean {
  switch (compare ?? 'text') {
    case 'exact':
      return a.trim() === b.trim();
    case 'loose':
      return a.replace(/\s+/g, '').toUpperCase() === b.replace(/\s+/g, '').toUpperCase();
    case 'digits':
      return a.replace(/\D/g, '') === b.replace(/\D/g, '');
    default:
      return a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();
  }
}

/** Does every check hold on the page? */
export async function checksHold(
  page: Page,
  checks: readonly Check[],
  ctx: StepContext,
  options: ReadOptions = {},
): Promise<boolean> {
  for (const check of checks) {
    if (check.when !== undefined && !truthy(render(check.when, ctx))) continue;
    const value = await readValue(page, page, check, ctx, options);
    if (value === undefined || value === null) return false;
    if (!sameUnder(check.compare, String(value), render(check.equals, ctx))) return false;
  }
  return true;
}

/**
 * What the checks say of the page: all hold, one read and different, or one not read at all
 * (its element is not there). `what` names the first check that did not hold, by its target
 * (never the value: the page's text is not the place to quote from).
 */
export async function checksVerdict(
  page: Page,
  checks: readonly Check[],
  ctx: StepContext,
): Promise<{ kind: 'hold' } | { kind: 'differs' | 'unread'; what: string }> {
  let differs: string | undefined;
  for (const [i, check] of checks.entries()) {
    if (check.when !== undefined && !truthy(render(check.when, ctx))) continue;
    const value = await readValue(page, page, check, ctx);
    const what = 'target' in check && check.target ? describeTarget(check.target) : `check ${i + 1}`;
    if (value === undefined || value === null) return { kind: 'unread', what };
    if (!sameUnder(check.compare, String(value), render(check.equals, ctx))) differs ??= what;
  }
  return differs === undefined ? { kind: 'hold' } : { kind: 'differs', what: differs };
}
