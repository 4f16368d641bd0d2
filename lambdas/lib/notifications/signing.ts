import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signatures of Belay's outgoing webhooks, the scheme Stripe and Anchor use: header
 * `Belay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. A receiver
 * recomputes it over the raw body, compares in constant time and refuses a timestamp older than a
 * few minutes (a replay). Each webhook has its own secret, derived from the deployment's signing
 * key and the webhook's tenant and id, so no secret is stored anywhere and none is shared between
 * tenants or webhooks.
 */

export const SIGNATURE_HEADER = 'Belay-Signature';

/** The secret of one webhook (what its receiver verifies with), shown to its admin once. */
export function webhookSecret(signingKey: string, tenantId: string, webhookId: string): string {
  return `whsec_${createHmac('sha256', signingKey).update(`belay-webhook:${tenantId}:${webhookId}`).digest('base64url')}`;
}

/** The `Belay-Signature` value of `body` sent at `timestamp` (unix seconds). */
export function signPayload(secret: string, timestamp: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/**
 * A receiver's check (also what the tests and the docs' example use): the signature is
 * valid for `body` and no older than `toleranceSeconds`.
 *
 * @example
 * if (!verifySignature(secret, req.headers['belay-signature'], rawBody, Date.now() / 1000)) return res.status(400);
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  if (!header) return false;
  const parts = Object.fromEntries(header.split(',').map((p) => p.trim().split('=') as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !parts.v1) return false;
  const expected = Buffer.from(signPayload(secret, t, body).split('v1=')[1] as string, 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
