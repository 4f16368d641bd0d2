import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { redactText } from '../redact.ts';

/** Characters of accessibility snapshot a decision is shown (and the ledger keeps). */
export const SNAPSHOT_BUDGET = 6_000;

/** What the page shows, as a model may see it: redacted, trimmed, with its fingerprint. */
export interface Seen {
  url: string;
  snapshot: string;
  /** sha256 of the redacted snapshot (first 16 hex): which page a decision was made on. */
  fingerprint: string;
}

/**
 * The page's accessibility snapshot (Playwright's `ariaSnapshot()`, the roles and accessible
 * names a person would read) with every secret value the step knows replaced by its
 * placeholder, then the house redaction (card numbers, tokens, registered secrets), trimmed to
 * the budget. A password field's value never appears: Playwright does not read it out.
 */
export async function observe(page: Page, secrets: Readonly<Record<string, string>>): Promise<Seen> {
  const raw = await page.locator('body').ariaSnapshot({ timeout: 5_000 });
  const snapshot = trim(redactText(withPlaceholders(raw, secrets)));
  return { url: redactText(page.url()), snapshot, fingerprint: fingerprint(snapshot) };
}

/** Every secret value in `text` replaced by `{{secret:name}}` (longest first, so none is left in part). */
export function withPlaceholders(text: string, secrets: Readonly<Record<string, string>>): string {
  let out = text;
  const byLength = Object.entries(secrets)
    .filter(([, v]) => v.length > 0)
    .sort((a, b) => b[1].length - a[1].length);
  for (const [name, value] of byLength) out = out.split(value).join(`{{secret:${name}}}`);
  return out;
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
