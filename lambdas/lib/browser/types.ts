import type { Browser, Page } from 'playwright-core';
import type { RefusedWrites } from './allowlist.ts';
import type { LiveViewAccess } from './live-view-token.ts';
import type { VolumeApi } from './volumes.ts';
import type { WriteGuard, WriteGuardOptions } from './write-guard.ts';

/** How to create a browser session: an account's profile, identities, and timeouts sized to the job. */
export interface OpenSessionOptions {
  /** Persisted profile to start from and save back to on a graceful end. */
  profile?: { name: string; persist: boolean };
  /** Anchor identity ids (managed authentication) to attach to the session. */
  identityIds?: string[];
  /** No CDP client connected for this long ends the session. Must cover the longest restart window. */
  idleTimeoutMinutes: number;
  /** Hard cap on the session's life. */
  maxDurationMinutes: number;
  /** Free-form tags stored with the session (job id, tenant). Never secrets. */
  tags?: Record<string, string>;
  /** Team volumes to mount (Anchor's): a read-write one is where the browser saves downloads. */
  volumes?: { volumeId: string; readOnly: boolean }[];
}

export interface OpenedSession {
  sessionId: string;
  cdpUrl: string;
  liveViewUrl?: string;
}

export interface AttachOptions {
  /** Hostnames (exact, or `*.example.com`) the page may reach; any other request is blocked. Empty = no limit. */
  allowedDomains: string[];
  /** Per-attempt connect timeout. */
  timeoutMs?: number;
}

export interface Attached {
  sessionId: string;
  browser: Browser;
  /** The default context's existing page: the page the previous process left. */
  page: Page;
  /** True when a connection cached in this process was reused (warm). */
  reused: boolean;
  /** Requests blocked by the allowlist since attach (URLs, redacted of query strings). */
  blockedRequests(): string[];
  /**
   * Guards a write step's requests until `finish`: each unsafe request goes out on a fresh
   * connection, and the browser's own resends are reported (`write-guard.ts`).
   */
  guardWrites(options: WriteGuardOptions): Promise<WriteGuard>;
  /** Refuses every unsafe request the page sends until `end` (a drift check: nothing is committed). */
  refuseWrites(): Promise<RefusedWrites>;
}

/** What the provider reports a session used, where it reports it (zero when it does not). */
export interface SessionUsage {
  /** Bytes through the provider's proxy (`proxy_bytes`). */
  proxyBytes: number;
  /** Model tokens the provider's own AI features spent in the session (`tokens`). */
  modelTokens: number;
  /** The session's life as the provider counts it (`duration`), when given. */
  providerSeconds?: number;
}

/**
 * The browser layer as the engine sees it. One implementation talks to Anchor (or the local
 * Anchor-compatible service) through the `anchorbrowser` SDK and `playwright-core`.
 */
export interface BrowserAdapter {
  openSession(options: OpenSessionOptions): Promise<OpenedSession>;
  attach(sessionId: string, options: AttachOptions): Promise<Attached>;
  /** Disconnect this process from the session; the browser lives on. */
  detach(sessionId: string): Promise<void>;
  /** End the session (its profile is saved first when it was opened with `persist`). Idempotent. */
  endSession(sessionId: string): Promise<void>;
  isAlive(sessionId: string): Promise<boolean>;
  /** What the provider reports the session used so far. */
  usage(sessionId: string): Promise<SessionUsage>;
  /**
   * Ids of the running sessions that carry every one of `tags` (Anchor's
   * `GET /v1/sessions/all/status?tags=`): how a session whose creation was never recorded (the
   * create's response lost, the worker dead before it wrote the id) is found again.
   */
  runningSessions(tags: Record<string, string>): Promise<string[]>;
  /**
   * The session's live view for a person of `tenantId`: interactive (a takeover, for an approver)
   * or watch-only, as `access` says. Anchor's `live_view_url` as given at create, for an
   * interactive view only (it lets whoever holds it act), or the local service's view with a
   * fresh signed, short-lived token (`live-view-token.ts`). Undefined when there is none to show.
   */
  liveViewLink(
    session: { sessionId: string; liveViewUrl?: string },
    tenantId: string,
    access: LiveViewAccess,
  ): string | undefined;
  /**
   * Ends every live view link given out for the session so far (the takeover's wait ended):
   * the local service refuses their tokens from now on and closes the views open with them.
   * Anchor's `live_view_url` has no such call: it lives with its session.
   */
  revokeLiveViews(session: { sessionId: string; liveViewUrl?: string }): Promise<void>;
  /** The team's volumes and their files (files carried between sessions). */
  volumes: VolumeApi;
}
