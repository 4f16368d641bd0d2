import { AsyncLocalStorage } from 'node:async_hooks';
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

/**
 * Whose registered secrets `redactText` masks: one tenant's, or every tenant's. Text a tenant
 * will read (its API responses, its ledger) is masked with that tenant's secrets only: masking
 * another tenant's password there would tell the reader that a string it chose is someone's
 * password. Text only operators read (logs) is masked with every tenant's.
 */
export const ALL_TENANTS = 'all-tenants';
export type SecretScope = { tenantId: string } | typeof ALL_TENANTS;

/** Secret values this process has handled (credentials it read or stored), with the tenants they belong to. */
const KNOWN_SECRETS = new Map<string, Set<string>>();
const MAX_KNOWN_SECRETS = 1000;
/** Shorter values would mask ordinary words and numbers. */
export const MIN_KNOWN_SECRET_LENGTH = 6;

const currentTenant = new AsyncLocalStorage<string>();

/**
 * Runs `fn` as work for one tenant: text redacted in it (ledger entries, API responses) is
 * masked with that tenant's registered secrets. The engine runs each invocation so, the API
 * each request (an anonymous request in the scope of no tenant: `''`).
 */
export function withTenantScope<T>(tenantId: string, fn: () => T): T {
  return currentTenant.run(tenantId, fn);
}

/** The tenant whose work is running, or every tenant outside any tenant's work (process logs). */
function currentScope(): SecretScope {
  const tenantId = currentTenant.getStore();
  return tenantId === undefined ? ALL_TENANTS : { tenantId };
}

/**
 * Remembers a secret value (a password, a TOTP seed) of a tenant's account, so that
 * `redactText` masks it in free text later, where no key name says it is secret (an error
 * message quoting a form field, a page's text). Called by the secret stores whenever
 * credentials pass through them.
 */
export function registerSecret(tenantId: string, value: string | undefined): void {
  if (typeof value !== 'string' || value.length < MIN_KNOWN_SECRET_LENGTH) return;
  const tenants = KNOWN_SECRETS.get(value);
  if (tenants) {
    tenants.add(tenantId);
    return;
  }
  if (KNOWN_SECRETS.size >= MAX_KNOWN_SECRETS) {
    const oldest = KNOWN_SECRETS.keys().next().value;
    if (oldest !== undefined) KNOWN_SECRETS.delete(oldest);
  }
  KNOWN_SECRETS.set(value, new Set([tenantId]));
}

/**
 * Masks card numbers (keeping the last four digits), bearer tokens, API keys and registered
 * secrets in free text: the registered secrets of `scope` (by default, the tenant whose work
 * is running; every tenant's outside any).
 */
export function redactText(text: string, scope: SecretScope = currentScope()): string {
  let out = text
    .replace(CARD_NUMBER, (m) => {
      const digits = m.replace(/\D/g, '');
      return digits.length >= 13 ? `[card ****${digits.slice(-4)}]` : m;
    })
    .replace(BEARER, `$1${REDACTED}`)
    .replace(API_KEY, REDACTED);
  for (const [secret, tenants] of KNOWN_SECRETS) {
    if (scope !== ALL_TENANTS && !tenants.has(scope.tenantId)) continue;
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Is this key the name of a secret (its value is masked whatever it is)? */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Deep copy of `value` with secrets masked (free text as `redactText` in `scope`). Cycles are cut; depth is bounded. */
export function redact<T>(value: T, scope: SecretScope = currentScope()): T {
  return redactValue(value, 0, new WeakSet(), scope) as T;
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>, scope: SecretScope): unknown {
  if (typeof value === 'string') return redactText(value, scope);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 12 || seen.has(value)) return '[truncated]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen, scope));
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message, scope) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      isSecretKey(k) && v !== null && v !== undefined && v !== ''
        ? REDACTED
        : redactValue(v, depth + 1, seen, scope);
  }
  return out;
}

/** Evidence as it may be stored in the ledger. */
export function redactEvidence(evidence: Evidence, scope: SecretScope = currentScope()): Evidence {
  return redact(evidence, scope);
}
