import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { TARGET_ROLES } from '../actions.ts';
import type { Scalar } from './placeholders.ts';

/**
 * The parts of an action cache key an agent step computes itself (the engine adds the tenant
 * and the playbook's id and version). Every part is free of input values and page text, so
 * a second job with other inputs finds the first job's entry and no entry reveals a job's data.
 */

/** Roles of the controls a form is made of (navigation roles, which repeat with the data and move with a theme, are left out). */
const FORM_ROLES: ReadonlySet<string> = new Set(
  TARGET_ROLES.filter((r) => !['link', 'option', 'menuitem', 'tab'].includes(r)),
);

/**
 * The page's structure, hashed: how many controls of each form role it has (textboxes,
 * buttons, checkboxes, ...), read from Playwright's `ariaSnapshot()`. No accessible name, no
 * text and no position is in it, so the same form showing another customer has the same
 * fingerprint, and so has the form with a button renamed or its navigation moved (the cached
 * action then heals); a field added or removed changes it. Coarse on purpose: a wrong match is
 * caught by the replay's checks (each target must name exactly one element) and by verify.
 */
export function structuralFingerprint(ariaSnapshot: string): string {
  const counts = new Map<string, number>();
  for (const line of ariaSnapshot.split('\n')) {
    const role = /^\s*- ([a-z]+)\b/.exec(line)?.[1];
    if (role && FORM_ROLES.has(role)) counts.set(role, (counts.get(role) ?? 0) + 1);
  }
  return sha16(
    [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([role, n]) => `${role}:${n}`)
      .join(','),
  );
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
