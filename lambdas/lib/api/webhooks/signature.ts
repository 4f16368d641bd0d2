import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Anchor's webhook signatures (docs.anchorbrowser.io/webhooks/signature-verification):
 * `Anchor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over `v0:<timestamp>:<raw body>`
 * with the webhook's signing secret, and the same timestamp in `Anchor-Timestamp`. The
 * HMAC covers the raw bytes as received: the body must not be parsed and re-serialized first.
 */

export const SIGNATURE_HEADER = 'anchor-signature';
export const TIMESTAMP_HEADER = 'anchor-timestamp';

export type SignatureCheck =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch'; message: string };

/** The HMAC (hex) Anchor sends for `body` at `timestamp`. */
export function anchorSignature(secret: string, timestamp: number | string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex');
}

/** Headers of a delivery signed as Anchor signs it (tests, the local Anchor-compatible service). */
export function signAnchorDelivery(secret: string, body: string, timestamp: number): Record<string, string> {
  return {
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: `t=${timestamp},v1=${anchorSignature(secret, timestamp, body)}`,
  };
}

function parseSignatureHeader(value: string): { t?: string; v1: string[] } {
  const out: { t?: string; v1: string[] } = { v1: [] };
  for (const part of value.split(',')) {
    const [k, v] = part.trim().split('=', 2);
    if (k === 't' && v) out.t = v;
    else if (k === 'v1' && v) out.v1.push(v);
  }
  return out;
}

function equalHex(a: string, b: string): boolean {
  if (!/^[0-9a-f]{64}$/i.test(a)) return false;
  const x = Buffer.from(a.toLowerCase(), 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks a delivery: both headers present and agreeing, the timestamp within
 * `toleranceSeconds` of `now`, and a `v1` HMAC equal (constant-time) to one computed with
 * any of `secrets` (several while a secret is rotated).
 */
export function verifyAnchorSignature(input: {
  secrets: readonly string[];
  signatureHeader: string | undefined;
  timestampHeader: string | undefined;
  rawBody: string | Buffer;
  now: Date;
  toleranceSeconds: number;
}): SignatureCheck {
  const { signatureHeader, timestampHeader } = input;
  if (!signatureHeader)
    return { ok: false, reason: 'missing', message: 'the Anchor-Signature header is missing' };
  const parsed = parseSignatureHeader(signatureHeader);
  const stamp = timestampHeader ?? parsed.t;
  if (!stamp) return { ok: false, reason: 'missing', message: 'the Anchor-Timestamp header is missing' };
  if (!/^\d{1,12}$/.test(stamp) || (parsed.t !== undefined && parsed.t !== stamp) || parsed.v1.length === 0) {
    return {
      ok: false,
      reason: 'malformed',
      message: 'the Anchor-Signature or Anchor-Timestamp header is malformed',
    };
  }
  const timestamp = Number(stamp);
  if (Math.abs(input.now.getTime() / 1000 - timestamp) > input.toleranceSeconds) {
    return {
      ok: false,
      reason: 'stale',
      message: `the delivery's timestamp is more than ${input.toleranceSeconds} s away`,
    };
  }
  for (const secret of input.secrets) {
    const expected = anchorSignature(secret, stamp, input.rawBody);
    if (parsed.v1.some((candidate) => equalHex(candidate, expected))) return { ok: true, timestamp };
  }
  return { ok: false, reason: 'mismatch', message: 'the signature does not match' };
}
