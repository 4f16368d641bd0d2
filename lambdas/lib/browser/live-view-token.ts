import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token of the local browser service's interactive live view: who may drive which
 * session's browser, until when. Belay signs one each time it shows the live view (the
 * console's job page, the takeover notification); the local Anchor-compatible service checks
 * it on the page and again on the WebSocket that carries the screencast and the input. It is
 * bound to one session and one tenant (the session's `tenantId` tag), says whether the person may
 * act (`interactive`: only an approver, only while the job waits for a takeover) or only watch,
 * and expires quickly: at the takeover wait's end at the latest, and the local service refuses
 * every token issued before the session's live views were revoked (the takeover's Done).
 *
 * The key is derived from the Anchor API key both sides already hold, so no new secret is
 * stored. Anchor's own `live_view_url` carries Anchor's own access: Belay does not sign it.
 *
 * Format: `<base64url JSON {s, t, e, i, n}>.<base64url HMAC-SHA256(key, first part)>`.
 */

/** How long a live view link stays valid once shown (seconds): a person opens it within this. */
export const LIVE_VIEW_TOKEN_SECONDS = 15 * 60;

export interface LiveViewClaims {
  sessionId: string;
  tenantId: string;
  /** Expiry, epoch seconds. */
  expiresAt: number;
  /** May the holder act in the browser (a takeover), or only watch? */
  interactive: boolean;
  /** When it was signed, epoch milliseconds (a revocation refuses every token signed before it). */
  issuedAt: number;
}

/** What a person may do with a live view link, and until when. */
export interface LiveViewAccess {
  /** Act in the browser (a takeover, for an approver) rather than only watch. */
  interactive: boolean;
  /** The link stops working at this instant at the latest (the takeover wait's end), epoch ms. */
  untilMs?: number;
}

export type LiveViewCheck =
  | { ok: true; claims: LiveViewClaims }
  | {
      ok: false;
      reason: 'malformed' | 'bad-signature' | 'expired' | 'other-session' | 'other-tenant' | 'revoked';
    };

function signingKey(apiKey: string): Buffer {
  return createHmac('sha256', apiKey).update('belay-live-view-v1').digest();
}

function mac(apiKey: string, payload: string): Buffer {
  return createHmac('sha256', signingKey(apiKey)).update(payload).digest();
}

/** A token for `claims`, signed with the key derived from `apiKey`. */
export function signLiveViewToken(apiKey: string, claims: LiveViewClaims): string {
  const payload = Buffer.from(
    JSON.stringify({
      s: claims.sessionId,
      t: claims.tenantId,
      e: claims.expiresAt,
      i: claims.interactive,
      n: claims.issuedAt,
    }),
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
    if (
      typeof raw.s !== 'string' ||
      typeof raw.t !== 'string' ||
      typeof raw.e !== 'number' ||
      typeof raw.i !== 'boolean' ||
      typeof raw.n !== 'number'
    ) {
      return { ok: false, reason: 'malformed' };
    }
    claims = { sessionId: raw.s, tenantId: raw.t, expiresAt: raw.e, interactive: raw.i, issuedAt: raw.n };
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
 * with a fresh token (interactive or watch-only as `access` says; valid
 * {@link LIVE_VIEW_TOKEN_SECONDS}, or until `access.untilMs` when sooner), or Anchor's
 * `live_view_url` as Anchor gave it, for an interactive view only: Anchor's link lets whoever
 * holds it act, so it is never shown as a watch-only one. Undefined when the provider gave none,
 * or gave something that is not http(s).
 */
export function liveViewLinkFor(
  config: { apiKey: string; baseUrl: string },
  session: { sessionId: string; liveViewUrl?: string },
  tenantId: string,
  nowMs: number,
  access: LiveViewAccess,
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
  const isLocalService = isLocalLiveView(config.baseUrl, session.sessionId, url);
  if (!isLocalService) return access.interactive ? url.toString() : undefined;
  const latest = Math.floor(nowMs / 1000) + LIVE_VIEW_TOKEN_SECONDS;
  const until = access.untilMs === undefined ? latest : Math.floor(access.untilMs / 1000);
  if (until * 1000 <= nowMs) return undefined;
  url.searchParams.set(
    'token',
    signLiveViewToken(config.apiKey, {
      sessionId: session.sessionId,
      tenantId,
      expiresAt: Math.min(latest, until),
      interactive: access.interactive,
      issuedAt: nowMs,
    }),
  );
  return url.toString();
}

/** Is `url` the local service's own view of this very session (which Belay signs and can revoke)? */
export function isLocalLiveView(baseUrl: string, sessionId: string, url: URL): boolean {
  const local = LOCAL_LIVE_VIEW_PATH.exec(url.pathname);
  return url.origin === new URL(baseUrl).origin && local?.[1] === encodeURIComponent(sessionId);
}
