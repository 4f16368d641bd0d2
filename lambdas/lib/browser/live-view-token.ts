import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token of the local browser service's interactive live view: who may drive which
 * session's browser, until when. Belay signs one each time it shows the live view (the
 * console's job page, the takeover notification); the local Anchor-compatible service checks
 * it on the page and again on the WebSocket that carries the screencast and the input. It is
 * bound to one session and one tenant (the session's `tenantId` tag) and expires quickly.
 *
 * The key is derived from the Anchor API key both sides already hold, so no new secret is
 * stored. Anchor's own `live_view_url` carries Anchor's own access: Belay does not sign it.
 *
 * Format: `<base64url JSON {s, t, e}>.<base64url HMAC-SHA256(key, first part)>`.
 */

/** How long a live view link stays valid once shown (seconds): a person opens it within this. */
export const LIVE_VIEW_TOKEN_SECONDS = 15 * 60;

export interface LiveViewClaims {
  sessionId: string;
  tenantId: string;
  /** Expiry, epoch seconds. */
  expiresAt: number;
}

export type LiveViewCheck =
  | { ok: true; claims: LiveViewClaims }
  | { ok: false; reason: 'malformed' | 'bad-signature' | 'expired' | 'other-session' | 'other-tenant' };

function signingKey(apiKey: string): Buffer {
  return createHmac('sha256', apiKey).update('belay-live-view-v1').digest();
}

function mac(apiKey: string, payload: string): Buffer {
  return createHmac('sha256', signingKey(apiKey)).update(payload).digest();
}

/** A token for `claims`, signed with the key derived from `apiKey`. */
export function signLiveViewToken(apiKey: string, claims: LiveViewClaims): string {
  const payload = Buffer.from(
    JSON.stringify({ s: claims.sessionId, t: claims.tenantId, e: claims.expiresAt }),
  ).toString('base64url');
  return `${payload}.${mac(apiKey, payload).toString('base64url')}`;
}

/**
 * Checks a token for `sessionId`, owned by `tenantId` (undefined: the session names no tenant,
 * so no token can be for it), at `nowMs`. The signature is compared in constant time first;
 * nothing of an unsigned token is trusted.
 */
export function verifyLiveViewToken(
  apiKey: string,
  token: string | null | undefined,
  expected: { sessionId: string; tenantId: string | undefined },
  nowMs: number,
): LiveViewCheck {
  const [payload, signature, extra] = (token ?? '').split('.');
  if (!payload || !signature || extra !== undefined) return { ok: false, reason: 'malformed' };
  const given = Buffer.from(signature, 'base64url');
  const wanted = mac(apiKey, payload);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
    return { ok: false, reason: 'bad-signature' };
  }
  let claims: LiveViewClaims;
  try {
    const raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof raw.s !== 'string' || typeof raw.t !== 'string' || typeof raw.e !== 'number') {
      return { ok: false, reason: 'malformed' };
    }
    claims = { sessionId: raw.s, tenantId: raw.t, expiresAt: raw.e };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (claims.expiresAt * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  if (claims.sessionId !== expected.sessionId) return { ok: false, reason: 'other-session' };
  if (expected.tenantId === undefined || claims.tenantId !== expected.tenantId) {
    return { ok: false, reason: 'other-tenant' };
  }
  return { ok: true, claims };
}

/** The local service's live view path for a session (what its `live_view_url` points at). */
export const LOCAL_LIVE_VIEW_PATH = /^\/_local\/sessions\/([^/]+)\/live$/;

/**
 * The live view link to show a person of `tenantId` for a session: the local service's view
 * with a fresh token (valid {@link LIVE_VIEW_TOKEN_SECONDS}), or Anchor's `live_view_url` as
 * Anchor gave it. Undefined when the provider gave none, or gave something that is not http(s).
 */
export function liveViewLinkFor(
  config: { apiKey: string; baseUrl: string },
  session: { sessionId: string; liveViewUrl?: string },
  tenantId: string,
  nowMs: number,
): string | undefined {
  const raw = session.liveViewUrl;
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const local = LOCAL_LIVE_VIEW_PATH.exec(url.pathname);
  const isLocalService =
    url.origin === new URL(config.baseUrl).origin && local?.[1] === encodeURIComponent(session.sessionId);
  if (!isLocalService) return url.toString();
  url.searchParams.set(
    'token',
    signLiveViewToken(config.apiKey, {
      sessionId: session.sessionId,
      tenantId,
      expiresAt: Math.floor(nowMs / 1000) + LIVE_VIEW_TOKEN_SECONDS,
    }),
  );
  return url.toString();
}
