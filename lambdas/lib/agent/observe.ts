import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { forModel, type ModelView, urlForModel } from './model-view.ts';

/** Characters of accessibility snapshot a decision is shown (and the ledger keeps). */
export const SNAPSHOT_BUDGET = 6_000;

/** What the page shows, as a model may see it: values hidden, redacted, trimmed, with its fingerprint. */
export interface Seen {
  url: string;
  snapshot: string;
  /** sha256 of the snapshot as shown (first 16 hex): which page a decision was made on. */
  fingerprint: string;
}

/**
 * The page's accessibility snapshot (Playwright's `ariaSnapshot()`, the roles and accessible
 * names a person would read) and its URL, each through the same pass (`forModel`): the step's
 * secrets and the job's sensitive inputs as placeholders (typed, percent-encoded or
 * form-encoded), then the house redaction (registered secrets, tokens, card numbers that are
 * not the job's own values); the snapshot trimmed to the budget. A password field's value never
 * appears: Playwright does not read it out.
 */
export async function observe(page: Page, view: ModelView): Promise<Seen> {
  const raw = await page.locator('body').ariaSnapshot({ timeout: 5_000 });
  const snapshot = trim(forModel(raw, view));
  return { url: urlForModel(page.url(), view), snapshot, fingerprint: fingerprint(snapshot) };
}

/** `{{secret:name}}` placeholders replaced by their values, at execution only (never recorded). */
export function substituteSecrets(text: string, secrets: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{secret:([A-Za-z0-9_.-]+)\}\}/g, (whole, name: string) => secrets[name] ?? whole);
}

export function fingerprint(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

const TRIMMED = `- (snapshot trimmed at ${SNAPSHOT_BUDGET} characters)`;

/** Was the snapshot cut at the budget (the page goes on beyond what was seen)? */
export function wasTrimmed(snapshot: string): boolean {
  return snapshot.endsWith(TRIMMED);
}

function trim(snapshot: string): string {
  if (snapshot.length <= SNAPSHOT_BUDGET) return snapshot;
  return `${snapshot.slice(0, SNAPSHOT_BUDGET)}\n${TRIMMED}`;
}
