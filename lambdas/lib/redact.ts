import type { Evidence } from './ledger/types.ts';

/**
 * Redaction of secrets in logs, ledger evidence and API responses: passwords, one-time
 * codes, card numbers, API keys and task tokens. Applied at every boundary where data
 * leaves the process (log lines, ledger writes, HTTP responses), so a careless caller
 * cannot leak what it was handed.
 */

export const REDACTED = '[redacted]';

/** Keys whose values are secret whatever they hold. */
const SECRET_KEY =
  /pass(word|code|phrase)?|^pwd$|otp|one.?time|mfa.?code|^code$|card.?(number|no)|^pan$|cvc|cvv|secret|token|api.?key|authorization|cookie|credential/i;

/** 13-19 digits, optionally grouped by spaces or dashes: a payment card number. */
const CARD_NUMBER = /\b(?:\d[ -]?){12,18}\d\b/g;
/** Bearer tokens and Belay API keys inside free text. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const API_KEY = /\bblk_[A-Za-z0-9_-]{16,}\b/g;

/** Secret values this process has handled (credentials it read or stored), masked wherever they appear. */
const KNOWN_SECRETS = new Set<string>();
const MAX_KNOWN_SECRETS = 1000;
/** Shorter values would mask ordinary words and numbers. */
export const MIN_KNOWN_SECRET_LENGTH = 6;

/**
 * Remembers a secret value (a password, a TOTP seed) that this process handles, so that
 * `redactText` masks it in any free text later, where no key name says it is secret (an
 * error message quoting a form field, a page's text). Called by the secret stores whenever
 * credentials pass through them.
 */
export function registerSecret(value: string | undefined): void {
  if (typeof value !== 'string' || value.length < MIN_KNOWN_SECRET_LENGTH) return;
  if (KNOWN_SECRETS.size >= MAX_KNOWN_SECRETS) {
    const oldest = KNOWN_SECRETS.values().next().value;
    if (oldest !== undefined) KNOWN_SECRETS.delete(oldest);
  }
  KNOWN_SECRETS.add(value);
}

/** Masks card numbers (keeping the last four digits), bearer tokens, API keys and registered secrets in free text. */
export function redactText(text: string): string {
  let out = text
    .replace(CARD_NUMBER, (m) => {
      const digits = m.replace(/\D/g, '');
      return digits.length >= 13 ? `[card ****${digits.slice(-4)}]` : m;
    })
    .replace(BEARER, `$1${REDACTED}`)
    .replace(API_KEY, REDACTED);
  for (const secret of KNOWN_SECRETS) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Is this key the name of a secret (its value is masked whatever it is)? */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Deep copy of `value` with secrets masked. Cycles are cut; depth is bounded. */
export function redact<T>(value: T): T {
  return redactValue(value, 0, new WeakSet()) as T;
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 12 || seen.has(value)) return '[truncated]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen));
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      isSecretKey(k) && v !== null && v !== undefined && v !== ''
        ? REDACTED
        : redactValue(v, depth + 1, seen);
  }
  return out;
}

/** Evidence as it may be stored in the ledger. */
export function redactEvidence(evidence: Evidence): Evidence {
  return redact(evidence);
}
