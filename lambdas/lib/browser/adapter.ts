/**
 * The browser adapter: Anchor sessions through the official `anchorbrowser` SDK, pages through
 * `playwright-core` over CDP. It knows nothing of the local service (point `baseUrl` at it) but
 * the form of its live view link, which it signs for the person shown it (`live-view-token.ts`).
 *
 * Both libraries are loaded on first use, not at module load: together they take 0.5-0.7 s to
 * load, which a cold start that never touches a browser (Start while the job is queued,
 * AwaitHuman arming a wait) should not pay, and a reattach needs only playwright-core (the CDP URL is built here).
 */

import type AnchorbrowserClient from 'anchorbrowser';
import { NotFoundError } from 'anchorbrowser/core/error';
import type { Browser } from 'playwright-core';
import { type AllowlistState, applyAllowlist, installRequestPolicy, refuseWrites } from './allowlist.ts';
import { BrowserConfigError, SessionUnavailableError } from './errors.ts';
import { isLocalLiveView, liveViewLinkFor } from './live-view-token.ts';
import { loadPlaywright } from './load-playwright.ts';
import { classifyConnectFailure, isTerminalStatus, translateApiError } from './translate.ts';
import type {
  Attached,
  AttachOptions,
  BrowserAdapter,
  OpenedSession,
  OpenSessionOptions,
  SessionUsage,
} from './types.ts';
import { sdkVolumeApi } from './volumes.ts';
import { startWriteGuard } from './write-guard.ts';

export interface BrowserAdapterConfig {
  apiKey: string;
  /** API base URL (default: the SDK's, `https://api.anchorbrowser.io`). */
  baseUrl?: string;
  /** Per-call timeout for SDK calls (default 30 s). The SDK ignores client-level timeouts on resource calls. */
  callTimeoutMs?: number;
  /** Per-call retries of transient SDK failures (default 2). */
  maxRetries?: number;
  /** Default CDP connect timeout when `attach` is not given one (default 15 s). */
  connectTimeoutMs?: number;
}

interface Connection {
  browser: Browser;
  allowlist: AllowlistState;
}

/** The SDK's default API base URL (what `new Anchorbrowser()` uses without `baseURL`). */
export const DEFAULT_ANCHOR_BASE_URL = 'https://api.anchorbrowser.io';

let sdk: Promise<typeof import('anchorbrowser')> | undefined;

/**
 * Loads playwright-core now instead of at the first attach: for an environment initialized
 * ahead of its invocations (provisioned concurrency), where load time at init is free.
 */
export async function preloadBrowserLibraries(): Promise<void> {
  loadPlaywright();
}

/** The `anchorbrowser` SDK, loaded once per process on first use. */
function loadSdk(): Promise<typeof import('anchorbrowser')> {
  sdk ??= import('anchorbrowser');
  return sdk;
}

/** CDP connections of this process, by base URL and session id: a warm Lambda reattaches for free. */
const connections = new Map<string, Promise<Connection>>();

/** Session ids with a cached connection in this process (diagnostics and tests). */
export function cachedSessionIds(): string[] {
  return [...connections.keys()].map((k) => k.slice(k.indexOf('\n') + 1));
}

/**
 * The CDP URL the SDK's own `client.browser.connect(id)` builds (`getCdpUrl` in
 * `anchorbrowser/lib/browser`): the API base with `api.` -> `connect.` and the key in the query.
 */
export function sessionCdpUrl(baseUrl: string, sessionId: string, apiKey: string): string {
  const base = baseUrl.replace('https://', 'wss://').replace('http://', 'ws://').replace('api.', 'connect.');
  return `${base}?apiKey=${encodeURIComponent(apiKey)}&sessionId=${encodeURIComponent(sessionId)}`;
}

/**
 * Build an adapter.
 *
 * @example
 * const browser = createBrowserAdapter({ apiKey, baseUrl: 'http://127.0.0.1:8790' });
 * const { sessionId } = await browser.openSession({ idleTimeoutMinutes: 60, maxDurationMinutes: 240 });
 * const { page } = await browser.attach(sessionId, { allowedDomains: ['shop.example'] });
 */
export function createBrowserAdapter(config: BrowserAdapterConfig): BrowserAdapter {
  const baseUrl = config.baseUrl || DEFAULT_ANCHOR_BASE_URL;
  let clientPromise: Promise<AnchorbrowserClient> | undefined;
  const client = (): Promise<AnchorbrowserClient> => {
    clientPromise ??= loadSdk().then(
      ({ default: Anchorbrowser }) => new Anchorbrowser({ apiKey: config.apiKey, baseURL: baseUrl }),
    );
    clientPromise.catch(() => {
      clientPromise = undefined;
    });
    return clientPromise;
  };
  const sessions = async (): Promise<AnchorbrowserClient['sessions']> => (await client()).sessions;
  const call = { timeout: config.callTimeoutMs ?? 30_000, maxRetries: config.maxRetries ?? 2 };
  // POST /v1/sessions takes no idempotency key: an SDK retry after a response was lost (a 5xx
  // or a timeout once Anchor had started the browser) would start a second session that
  // counts against the plan's concurrency. One attempt; the caller ends what it leaves behind
  // by its tags (see `runningSessions`).
  const createCall = { ...call, maxRetries: 0 };
  const keyOf = (sessionId: string): string => `${baseUrl}\n${sessionId}`;

  const status = async (sessionId: string): Promise<string | undefined> =>
    (await (await sessions()).retrieve(sessionId, call)).data?.status;

  const connect = async (sessionId: string, timeoutMs: number): Promise<Connection> => {
    let browser: Browser;
    try {
      const { chromium } = loadPlaywright();
      browser = await chromium.connectOverCDP(sessionCdpUrl(baseUrl, sessionId, config.apiKey), {
        timeout: timeoutMs,
      });
    } catch (err) {
      throw await classifyConnectFailure(sessionId, err, () => status(sessionId));
    }
    return { browser, allowlist: { allowed: [], blocked: [], installed: false } };
  };

  const drop = async (sessionId: string): Promise<void> => {
    const key = keyOf(sessionId);
    const cached = connections.get(key);
    connections.delete(key);
    const conn = await cached?.catch(() => undefined);
    // On a connectOverCDP browser, close() only disconnects; the session's browser lives on.
    await conn?.browser.close().catch(() => undefined);
  };

  return {
    liveViewLink: (session, tenantId, access) =>
      liveViewLinkFor({ apiKey: config.apiKey, baseUrl }, session, tenantId, Date.now(), access),
    async revokeLiveViews(session) {
      if (!session.liveViewUrl || !URL.canParse(session.liveViewUrl)) return;
      if (!isLocalLiveView(baseUrl, session.sessionId, new URL(session.liveViewUrl))) return;
      await (await client()).post(
        `/_local/sessions/${encodeURIComponent(session.sessionId)}/live/revoke`,
        call,
      );
    },
    volumes: sdkVolumeApi(client, call),

    async openSession(options: OpenSessionOptions): Promise<OpenedSession> {
      const tags = tagList(options.tags ?? {});
      try {
        const res = await (await sessions()).create(
          {
            session: {
              timeout: { idle_timeout: options.idleTimeoutMinutes, max_duration: options.maxDurationMinutes },
              ...(tags.length > 0 ? { tags } : {}),
            },
            ...(options.profile ? { browser: { profile: options.profile } } : {}),
            ...(options.identityIds?.length ? { identities: options.identityIds.map((id) => ({ id })) } : {}),
            // Not in the pinned SDK's `SessionCreateParams`; the SDK sends the body as given.
            ...(options.volumes?.length
              ? { volumes: options.volumes.map((v) => ({ id: v.volumeId, read_only: v.readOnly })) }
              : {}),
          } as Parameters<AnchorbrowserClient['sessions']['create']>[0],
          createCall,
        );
        const { id, cdp_url: cdpUrl, live_view_url: liveViewUrl } = res.data ?? {};
        if (!id || !cdpUrl) {
          throw new SessionUnavailableError('create: response without id or cdp_url', {
            operation: 'create',
          });
        }
        return { sessionId: id, cdpUrl, ...(liveViewUrl ? { liveViewUrl } : {}) };
      } catch (err) {
        throw translateApiError(err, 'create');
      }
    },

    async attach(sessionId: string, options: AttachOptions): Promise<Attached> {
      const key = keyOf(sessionId);
      let pending = connections.get(key);
      let reused = false;
      if (pending) {
        const conn = await pending.catch(() => undefined);
        reused = conn?.browser.isConnected() ?? false;
        if (!reused) {
          if (connections.get(key) === pending) connections.delete(key);
          await conn?.browser.close().catch(() => undefined);
          pending = undefined;
        }
      }
      if (!pending) {
        const created = connect(sessionId, options.timeoutMs ?? config.connectTimeoutMs ?? 15_000);
        pending = created;
        connections.set(key, created);
        void created.then(
          (conn) =>
            conn.browser.once('disconnected', () => {
              if (connections.get(key) === created) connections.delete(key);
            }),
          () => {
            if (connections.get(key) === created) connections.delete(key);
          },
        );
      }
      const { browser, allowlist } = await pending;
      try {
        const context = browser.contexts()[0];
        if (!context) throw new Error('the browser has no default context');
        // The page the job works in, never a tab the write guard opened (`chrome://`).
        const page =
          context.pages().find((p) => !p.isClosed() && !p.url().startsWith('chrome://')) ??
          (await context.newPage());
        const blocked = await applyAllowlist(context, allowlist, options.allowedDomains);
        return {
          sessionId,
          browser,
          page,
          reused,
          blockedRequests: () => [...blocked],
          guardWrites: (guard) =>
            startWriteGuard(browser, page, allowlist, () => installRequestPolicy(context, allowlist), guard),
          refuseWrites: () => refuseWrites(context, allowlist),
        };
      } catch (err) {
        await drop(sessionId);
        throw await classifyConnectFailure(sessionId, err, () => status(sessionId));
      }
    },

    detach: drop,

    async endSession(sessionId: string): Promise<void> {
      await drop(sessionId);
      try {
        await (await sessions()).delete(sessionId, call);
      } catch (err) {
        if (err instanceof NotFoundError) return;
        throw translateApiError(err, 'delete', sessionId);
      }
    },

    async usage(sessionId: string): Promise<SessionUsage> {
      try {
        const data = (await (await sessions()).retrieve(sessionId, call)).data;
        return {
          proxyBytes: nonNegative(data?.proxy_bytes),
          modelTokens: tokenCount(data?.tokens),
          ...(typeof data?.duration === 'number' ? { providerSeconds: data.duration } : {}),
        };
      } catch (err) {
        throw translateApiError(err, 'retrieve', sessionId);
      }
    },

    async runningSessions(tags: Record<string, string>): Promise<string[]> {
      const wanted = tagList(tags);
      try {
        const res = await (await sessions()).all.status({ ...call, query: { tags: wanted.join(',') } });
        // Anchor filters by the query; the items are checked again, for a service that does not.
        return (res.data?.items ?? [])
          .filter((item) => !isTerminalStatus(item.status))
          .filter((item) => {
            const have = (item as { tags?: unknown }).tags;
            return !Array.isArray(have) || wanted.every((t) => have.includes(t));
          })
          .map((item) => item.session_id);
      } catch (err) {
        throw translateApiError(err, 'list');
      }
    },

    async isAlive(sessionId: string): Promise<boolean> {
      try {
        return !isTerminalStatus(await status(sessionId));
      } catch (err) {
        if (err instanceof NotFoundError) return false;
        throw translateApiError(err, 'retrieve', sessionId);
      }
    },
  };
}

/** Session tags as Anchor stores them: `key:value` strings. */
function tagList(tags: Record<string, string>): string[] {
  return Object.entries(tags).map(([k, v]) => `${k}:${v}`);
}

function nonNegative(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * The provider's `tokens` (its shape is not specified): a number, an object with `total`,
 * or an object of counts (input, output...) that are added up.
 */
export function tokenCount(tokens: unknown): number {
  if (typeof tokens === 'number') return nonNegative(tokens);
  if (!tokens || typeof tokens !== 'object') return 0;
  const record = tokens as Record<string, unknown>;
  if (typeof record.total === 'number') return nonNegative(record.total);
  if (typeof record.total_tokens === 'number') return nonNegative(record.total_tokens);
  return Object.values(record).reduce<number>((sum, v) => sum + nonNegative(v), 0);
}

function requireEnv(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new BrowserConfigError(`${name} is not set`, { variable: name });
  return value;
}

/**
 * The adapter configured from `ANCHORBROWSER_API_KEY` (required) and `ANCHORBROWSER_BASE_URL`
 * (optional; the local service's URL on one machine). Call once, at cold start.
 */
export function browserAdapterFromEnv(env: NodeJS.ProcessEnv = process.env): BrowserAdapter {
  const baseUrl = env.ANCHORBROWSER_BASE_URL?.trim();
  return createBrowserAdapter({
    apiKey: requireEnv(env, 'ANCHORBROWSER_API_KEY'),
    ...(baseUrl ? { baseUrl } : {}),
  });
}
