/**
 * Targets: how a generic application and a declarative step name an element, by CSS or the
 * way a person would (its label, its role and accessible name, its text), optionally inside
 * another element and filtered by attribute values compared in code (never spliced into a
 * selector, so a value may hold any character).
 */
import type { Locator, Page } from 'playwright-core';
import { z } from 'zod';
import { AmbiguousTargetError } from './errors.ts';

/** ARIA roles a target may name (those `getByRole` accepts that forms and records use). */
export const TARGET_ROLES = [
  'button',
  'checkbox',
  'combobox',
  'link',
  'listitem',
  'option',
  'radio',
  'row',
  'searchbox',
  'spinbutton',
  'switch',
  'tab',
  'textbox',
  'cell',
  'heading',
  'alert',
  'status',
  'dialog',
  'menuitem',
  'region',
] as const;

/** An attribute filter: the attribute's value (trimmed) equals this, optionally ignoring case. */
export type AttributeFilter = string | { equals: string; ignoreCase?: boolean };

/** An element named by exactly one of css, label, role (with name), text, testId or placeholder. */
export interface TargetSpec {
  css?: string;
  /** The text of the field's `<label>` (or `aria-label`). */
  label?: string;
  role?: (typeof TARGET_ROLES)[number];
  /** With `role`: the accessible name (a button's text, a link's text). */
  name?: string;
  /** Visible text. */
  text?: string;
  /** `data-testid` value. */
  testId?: string;
  placeholder?: string;
  /** Match label, name, text and placeholder exactly (default: case-insensitive substring). */
  exact?: boolean;
  /** Only inside the element that this target finds; it must find exactly one (several: an error). */
  within?: Target;
  /** Only elements whose attributes have these values (compared in code). */
  where?: Record<string, AttributeFilter>;
  /** The n-th (0-based) of the elements found. */
  nth?: number;
}

/** A CSS selector, or an element named as a person would name it. */
export type Target = string | TargetSpec;

const filterSchema = z.union([
  z.string(),
  z.object({ equals: z.string(), ignoreCase: z.boolean().optional() }).strict(),
]);

const WAYS = ['css', 'label', 'role', 'text', 'testId', 'placeholder'] as const;

/** The zod schema of a target (the declarative form and `formSignIn` check with it). */
export const TargetSchema: z.ZodType<Target> = z.lazy(() =>
  z.union([
    z.string().min(1),
    z
      .object({
        css: z.string().min(1).optional(),
        label: z.string().min(1).optional(),
        role: z.enum(TARGET_ROLES).optional(),
        name: z.string().min(1).optional(),
        text: z.string().min(1).optional(),
        testId: z.string().min(1).optional(),
        placeholder: z.string().min(1).optional(),
        exact: z.boolean().optional(),
        within: TargetSchema.optional(),
        where: z.record(z.string().regex(/^[a-zA-Z_:][-a-zA-Z0-9_:.]*$/), filterSchema).optional(),
        nth: z.number().int().min(0).optional(),
      })
      .strict()
      .refine((t) => WAYS.filter((w) => t[w] !== undefined).length === 1, {
        message: `name the element exactly one way: ${WAYS.join(', ')}`,
      })
      .refine((t) => t.name === undefined || t.role !== undefined, { message: 'name goes with role' }),
  ]),
);

/** One line for people and messages: how the target names its element. */
export function describeTarget(target: Target): string {
  if (typeof target === 'string') return target;
  const way = WAYS.find((w) => target[w] !== undefined) ?? 'css';
  const what =
    way === 'role'
      ? `role ${target.role}${target.name ? ` "${target.name}"` : ''}`
      : `${way} "${target[way]}"`;
  const inside = target.within ? ` inside ${describeTarget(target.within)}` : '';
  const where = target.where ? ` where ${Object.keys(target.where).join(', ')}` : '';
  return `${what}${inside}${where}${target.nth !== undefined ? ` #${target.nth}` : ''}`;
}

type Root = Page | Locator;

/** Renders a text of the target (label, name, attribute values) before use: templates in the declarative form. */
export type Render = (text: string) => string;
const asIs: Render = (text) => text;

function baseLocator(root: Root, t: TargetSpec, render: Render): Locator {
  const exact = t.exact ?? false;
  if (t.css !== undefined) return root.locator(t.css);
  if (t.label !== undefined) return root.getByLabel(render(t.label), { exact });
  if (t.role !== undefined)
    return root.getByRole(t.role, t.name === undefined ? {} : { name: render(t.name), exact });
  if (t.text !== undefined) return root.getByText(render(t.text), { exact });
  if (t.testId !== undefined) return root.getByTestId(render(t.testId));
  return root.getByPlaceholder(render(t.placeholder ?? ''), { exact });
}

async function passes(el: Locator, where: Record<string, AttributeFilter>, render: Render): Promise<boolean> {
  for (const [attr, filter] of Object.entries(where)) {
    const want = typeof filter === 'string' ? { equals: filter } : filter;
    const got = ((await el.getAttribute(attr).catch(() => null)) ?? '').trim();
    const expected = render(want.equals).trim();
    if (want.ignoreCase ? got.toLowerCase() !== expected.toLowerCase() : got !== expected) return false;
  }
  return true;
}

/**
 * Every element the target finds now (a `where` filter or `within` is applied to what is on
 * the page at this moment). For counting records and picking rows.
 *
 * @throws AmbiguousTargetError when its `within` finds more than one element
 */
export async function locateAll(root: Root, target: Target, render: Render = asIs): Promise<Locator[]> {
  const t: TargetSpec = typeof target === 'string' ? { css: target } : target;
  let scope: Root = root;
  if (t.within !== undefined) {
    const scopes = await locateAll(root, t.within, render);
    if (scopes.length > 1) throw new AmbiguousTargetError(describeTarget(t.within), scopes.length);
    const [only] = scopes;
    if (!only) return [];
    scope = only;
  }
  const loc = baseLocator(scope, t, render);
  const count = await loc.count();
  const found: Locator[] = [];
  for (let i = 0; i < count; i++) {
    const el = loc.nth(i);
    if (!t.where || (await passes(el, t.where, render))) found.push(el);
  }
  return t.nth === undefined ? found : found.slice(t.nth, t.nth + 1);
}

/**
 * A locator of the target's element. A plain target gives a lazy locator (Playwright waits for
 * it as it acts); one with `within`, `where` or `nth` is looked up on the page as it is now, and
 * is undefined when nothing matches.
 */
export async function locate(
  root: Root,
  target: Target,
  render: Render = asIs,
): Promise<Locator | undefined> {
  if (typeof target === 'string') return root.locator(target).first();
  if (target.within === undefined && target.where === undefined && target.nth === undefined)
    return baseLocator(root, target, render).first();
  return (await locateAll(root, target, render))[0];
}

/** A locator of the target, or undefined when the page cannot say now (it navigates); an ambiguous one throws. */
async function locateNow(root: Root, target: Target, render: Render): Promise<Locator | undefined> {
  try {
    return await locate(root, target, render);
  } catch (err) {
    if (err instanceof AmbiguousTargetError) throw err;
    return undefined;
  }
}

/**
 * The target's element once it is visible, or undefined after `timeoutMs`. The first look has
 * no deadline, so a slow browser is not mistaken for a missing element.
 *
 * @throws AmbiguousTargetError when its `within` finds more than one element
 */
export async function visibleTarget(
  root: Root,
  target: Target,
  timeoutMs: number,
  render: Render = asIs,
): Promise<Locator | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const el = await locateNow(root, target, render);
    if (el && (await el.isVisible().catch(() => false))) return el;
    if (Date.now() >= until) return undefined;
    const page = typeof (root as Locator).page === 'function' ? (root as Locator).page() : (root as Page);
    await page.waitForTimeout(Math.min(100, Math.max(1, until - Date.now()))).catch(() => undefined);
  }
}

/**
 * Is the target's element visible right now?
 *
 * @throws AmbiguousTargetError when its `within` finds more than one element
 */
export async function targetVisible(root: Root, target: Target, render: Render = asIs): Promise<boolean> {
  const el = await locateNow(root, target, render);
  return el ? el.isVisible().catch(() => false) : false;
}
