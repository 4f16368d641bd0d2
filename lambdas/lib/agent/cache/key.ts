import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { TARGET_ROLES } from '../actions.ts';
import type { Scalar } from './placeholders.ts';

/**
 * The parts of an action cache key an agent step computes itself (the engine adds the tenant
 * and the playbook's id and version). Every part is free of input values and page text, so
 * a second job with other inputs finds the first job's entry and no entry reveals a job's data.
 */

/** Roles that make a page's structure besides the controls a target may have (landmarks). */
const LANDMARK_ROLES: ReadonlySet<string> = new Set(['form', 'main', 'navigation', 'dialog', 'table']);
const CONTROL_ROLES: ReadonlySet<string> = new Set(TARGET_ROLES);
/** Roles that repeat with the data (a list of records): a run of them counts as one. */
const REPEATING_ROLES: ReadonlySet<string> = new Set(['link', 'option', 'menuitem', 'tab']);

/**
 * The page's structure, hashed: the roles of its controls and landmarks with their depth, in
 * document order, read from Playwright's `ariaSnapshot()`. No accessible name and no text is
 * in it, so the same form showing another customer has the same fingerprint, and so has a
 * form whose button was renamed (the cached action heals); a field added or removed changes it.
 */
export function structuralFingerprint(ariaSnapshot: string): string {
  const parts: string[] = [];
  for (const line of ariaSnapshot.split('\n')) {
    const m = /^(\s*)- ([a-z]+)\b/.exec(line);
    if (!m) continue;
    const role = m[2] as string;
    if (!CONTROL_ROLES.has(role) && !LANDMARK_ROLES.has(role)) continue;
    const part = `${(m[1] ?? '').length}:${role}`;
    if (REPEATING_ROLES.has(role) && parts.at(-1) === part) continue;
    parts.push(part);
  }
  return sha16(parts.join('\n'));
}

/** The structural fingerprint of the page as it is now. */
export async function pageFingerprint(page: Page): Promise<string> {
  return structuralFingerprint(await page.locator('body').ariaSnapshot({ timeout: 5_000 }));
}

/**
 * The start URL's path with the job's data taken out: a segment equal to an input value
 * becomes its name (`{inputs.customerId}`), any other segment with a digit in it `:id`. The
 * query and fragment are dropped (they carry data, and the step's start is its path).
 */
export function normalisedPath(url: string, values: readonly (readonly [string, Scalar])[]): string {
  const { pathname } = new URL(url);
  return pathname
    .split('/')
    .map((segment) => {
      const decoded = safeDecode(segment);
      const named = values.find(([, v]) => String(v) === decoded);
      if (named && decoded !== '') return `{${named[0]}}`;
      return /\d/.test(decoded) ? ':id' : decoded;
    })
    .join('/');
}

/** The goal and fields as written (input names, not values), and their hash for the key. */
export function goalTemplateOf(
  goal: string,
  fields: Readonly<Record<string, string>>,
): {
  template: string;
  hash: string;
} {
  const template = JSON.stringify({
    goal,
    fields: Object.entries(fields).sort(([a], [b]) => a.localeCompare(b)),
  });
  return { template, hash: sha16(template) };
}

export function sha16(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
