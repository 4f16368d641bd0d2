import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Redaction of secrets in logs, ledger evidence and API responses: passwords, one-time
 * codes, card numbers, API keys and task tokens. Two passes:
 *
 * - `redact` / `redactText`, for people: everything above, card-like numbers included (13 to 19
 *   digits keep their last four). Applied at every exit for people: API views, the console, log
 *   lines, notifications.
 * - `maskSecrets` / `maskSecretText`, for what the engine keeps and reads back (the ledger):
 *   registered secrets, secret-named keys, bearer tokens and API keys, but no number is touched.
 *   A phone number, an invoice number or an IBAN looks like a card number; masked in the ledger,
 *   a replay would type the mask and a later step's evidence would hold it.
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

/**
 * Secret values this process has handled (credentials a store read or stored), by tenant.
 * Bounded per tenant, so that one tenant's values never push out another's (a tenant that
 * stores more loses its own oldest), and bounded in bytes overall, so the registry never grows
 * with what callers send: only credentials that a store actually holds are registered, each
 * at most as long as a stored credential may be.
 */
const KNOWN_SECRETS = new Map<string, Map<string, number>>();
/** Values kept per tenant (its newest). */
export const MAX_SECRETS_PER_TENANT = 200;
/** Bytes kept per tenant. */
export const MAX_SECRET_BYTES_PER_TENANT = 64 * 1024;
/** Bytes kept in all (then the tenant that holds the most gives up its oldest). */
export const MAX_SECRET_BYTES = 8 * 1024 * 1024;
/** Longest value registered: the longest credential a store accepts (a password, 1,024 characters). */
export const MAX_KNOWN_SECRET_LENGTH = 1024;
/** Shorter values would mask ordinary words and numbers. */
export const MIN_KNOWN_SECRET_LENGTH = 6;
let knownBytes = 0;

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

function forget(tenantId: string, values: Map<string, number>, value: string): void {
  knownBytes -= values.get(value) ?? 0;
  values.delete(value);
  if (values.size === 0) KNOWN_SECRETS.delete(tenantId);
}

function bytesOf(values: Map<string, number>): number {
  let sum = 0;
  for (const n of values.values()) sum += n;
  return sum;
}

/**
 * Remembers a secret value (a password, a TOTP seed) of a tenant's account, so that
 * `redactText` masks it in free text later, where no key name says it is secret (an error
 * message quoting a form field, a page's text). Called by the secret stores whenever stored
 * credentials pass through them (read, or written), never with what a request merely sent.
 */
export function registerSecret(tenantId: string, value: string | undefined): void {
  if (typeof value !== 'string' || value.length < MIN_KNOWN_SECRET_LENGTH) return;
  if (value.length > MAX_KNOWN_SECRET_LENGTH) return;
  const bytes = Buffer.byteLength(value, 'utf8');
  let values = KNOWN_SECRETS.get(tenantId);
  if (!values) {
    values = new Map();
    KNOWN_SECRETS.set(tenantId, values);
  }
  // Newest last: a value seen again moves to the end.
  if (values.has(value)) forget(tenantId, values, value);
  if (!KNOWN_SECRETS.has(tenantId)) KNOWN_SECRETS.set(tenantId, values);
  values.set(value, bytes);
  knownBytes += bytes;
  while (values.size > MAX_SECRETS_PER_TENANT || bytesOf(values) > MAX_SECRET_BYTES_PER_TENANT) {
    forget(tenantId, values, values.keys().next().value as string);
  }
  while (knownBytes > MAX_SECRET_BYTES) {
    let largest: [string, Map<string, number>] | undefined;
    for (const entry of KNOWN_SECRETS)
      if (!largest || bytesOf(entry[1]) > bytesOf(largest[1])) largest = entry;
    if (!largest) break;
    forget(largest[0], largest[1], largest[1].keys().next().value as string);
  }
}

/** How many values and bytes the registry holds (diagnostics and tests). */
export function registeredSecretsSize(): { values: number; bytes: number; tenants: number } {
  let values = 0;
  for (const v of KNOWN_SECRETS.values()) values += v.size;
  return { values, bytes: knownBytes, tenants: KNOWN_SECRETS.size };
}

/** What a pass masks besides registered secrets, bearer tokens and API keys. */
export interface RedactOptions {
  /** Card-like numbers (13 to 19 digits): for people, yes (default); in what the engine reads back, no. */
  cards?: boolean;
  /**
   * Values that stay as they are although they look like card numbers (digits compared): a job's
   * own values shown to its model (a phone number it typed must read back as typed).
   */
  keepNumbers?: readonly string[];
}

/**
 * Masks card numbers (keeping the last four digits), bearer tokens, API keys and registered
 * secrets in free text: the registered secrets of `scope` (by default, the tenant whose work
 * is running; every tenant's outside any).
 */
export function redactText(
  text: string,
  scope: SecretScope = currentScope(),
  options: RedactOptions = {},
): string {
  const kept = (options.keepNumbers ?? []).map((v) => v.replace(/\D/g, '')).filter((d) => d.length > 0);
  let out =
    options.cards === false
      ? text
      : text.replace(CARD_NUMBER, (m) => {
          const digits = m.replace(/\D/g, '');
          if (digits.length < 13 || kept.some((k) => k.includes(digits))) return m;
          return `[card ****${digits.slice(-4)}]`;
        });
  out = out.replace(BEARER, `$1${REDACTED}`).replace(API_KEY, REDACTED);
  return maskKnownSecrets(out, scope);
}

/**
 * Masks only the registered secrets of `scope` (credentials a store handled), leaving every
 * other value as it is: for what a person approves as a form's values, where a number that
 * merely looks like a card is the value being approved.
 */
export function maskKnownSecrets(text: string, scope: SecretScope = currentScope()): string {
  let out = text;
  const tenants = scope === ALL_TENANTS ? [...KNOWN_SECRETS.values()] : [KNOWN_SECRETS.get(scope.tenantId)];
  for (const values of tenants) {
    for (const secret of values?.keys() ?? []) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
  }
  return out;
}

/** Is this key the name of a secret (its value is masked whatever it is)? */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Deep copy of `value` with secrets masked (free text as `redactText` in `scope`). Cycles are cut; depth is bounded. */
export function redact<T>(value: T, scope: SecretScope = currentScope()): T {
  return redactValue(value, 0, new WeakSet(), scope, {}) as T;
}

/**
 * Free text with registered secrets, bearer tokens and API keys masked, and every number left
 * as it is: what the engine stores and reads back (see the module's comment).
 */
export function maskSecretText(text: string, scope: SecretScope = currentScope()): string {
  return redactText(text, scope, { cards: false });
}

/**
 * Deep copy of `value` with secret-named keys, registered secrets, bearer tokens and API keys
 * masked, and every number left as it is: the ledger's pass on the way in. People see it
 * through `redact` on the way out.
 */
export function maskSecrets<T>(value: T, scope: SecretScope = currentScope()): T {
  return redactValue(value, 0, new WeakSet(), scope, { cards: false }) as T;
}

function redactValue(
  value: unknown,
  depth: number,
  seen: WeakSet<object>,
  scope: SecretScope,
  options: RedactOptions,
): unknown {
  if (typeof value === 'string') return redactText(value, scope, options);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 12 || seen.has(value)) return '[truncated]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen, scope, options));
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message, scope, options) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      isSecretKey(k) && v !== null && v !== undefined && v !== ''
        ? REDACTED
        : redactValue(v, depth + 1, seen, scope, options);
  }
  return out;
}
