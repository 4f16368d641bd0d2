/**
 * The HTTP API of the local Anchor service: the paths the `anchorbrowser` SDK calls, with the
 * real API's `{ data: ... }` wrapping and `{ error: { code, message } }` error bodies, plus
 * `/_local/...` endpoints (which browser serves a session, for tests; the interactive live view, `live-view.ts`) and
 * the hosted connect page (`connect-page.ts`). Applications and identities: `identity-routes.ts`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { routeConnectPage } from './connect-page.ts';
import { ApiError } from './errors.ts';
import { readBody, send } from './http.ts';
import type { IdentityRegistry } from './identities.ts';
import { routeIdentities } from './identity-routes.ts';
import {
  LIVE_VIEW_SCRIPT_PATH,
  revokeLiveViews,
  serveLiveViewPage,
  serveLiveViewScript,
} from './live-view.ts';
import { describeIssues, PROFILE_NAME, profileCreateSchema } from './schema.ts';
import type { SessionManager } from './sessions.ts';
import type { ProfileRecord, SessionRecord, Store } from './store.ts';
import { routeVolumeDownload, routeVolumes } from './volume-routes.ts';
import type { VolumeStore } from './volumes.ts';

export interface RouteContext {
  sessions: SessionManager;
  store: Store;
  identities: IdentityRegistry;
  volumes: VolumeStore;
  checkKey: (key: string | undefined) => boolean;
  baseUrl: () => string;
  apiKey: string;
}

/** The SDK's `cdp_url` form (`getCdpUrl` in anchorbrowser/lib/browser): the base URL with query. */
export function cdpUrlFor(baseUrl: string, id: string, apiKey: string): string {
  return `${baseUrl.replace('http://', 'ws://')}?apiKey=${encodeURIComponent(apiKey)}&sessionId=${encodeURIComponent(id)}`;
}

function sessionView(r: SessionRecord): Record<string, unknown> {
  const end = r.endedAt ? Date.parse(r.endedAt) : Date.now();
  return {
    session_id: r.id,
    team_id: 'local',
    status: r.status,
    created_at: r.createdAt,
    duration: Math.round((end - Date.parse(r.createdAt)) / 1000),
    credits_used: 0,
    configuration: r.configuration,
    playground: false,
    proxy_bytes: 0,
    tokens: {},
    steps: [],
    tags: r.tags,
  };
}

function profileView(p: ProfileRecord): Record<string, unknown> {
  return {
    name: p.name,
    description: p.description ?? '',
    created_at: p.created_at,
    source: p.source ?? 'session',
    session_id: p.session_id ?? null,
    status: p.status,
  };
}

function session(ctx: RouteContext, id: string): SessionRecord {
  const record = ctx.sessions.get(decodeURIComponent(id));
  if (!record) throw new ApiError(404, 'Session not found');
  return record;
}

async function profile(ctx: RouteContext, name: string): Promise<ProfileRecord> {
  const decoded = decodeURIComponent(name);
  const record = PROFILE_NAME.test(decoded) ? await ctx.store.getProfile(decoded) : undefined;
  if (!record) throw new ApiError(404, 'Profile not found');
  return record;
}

async function route(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const parts = url.pathname.split('/').filter(Boolean);
  const method = req.method ?? 'GET';
  const key = `${method} /${parts.map((p, i) => (i === 2 && !(parts[1] === 'sessions' && p === 'all') ? ':x' : p)).join('/')}`;
  // A person's browser, with no API key: the live view's signed token is what it holds.
  if (
    parts[0] === '_local' &&
    parts[1] === 'sessions' &&
    parts[3] === 'live' &&
    parts.length === 4 &&
    method === 'GET'
  ) {
    return serveLiveViewPage(ctx.apiKey, ctx.sessions.get(decodeURIComponent(parts[2] ?? '')), url, res);
  }
  if (url.pathname === LIVE_VIEW_SCRIPT_PATH && method === 'GET') return serveLiveViewScript(res);
  // A person's browser, with no API key: the token in the page's query is what it holds.
  if (await routeConnectPage(ctx.identities, req, res, url)) return;
  // A signed volume-file URL, as Anchor's pre-signed storage URLs: the signature is the grant.
  if (await routeVolumeDownload(ctx, req, res, url)) return;
  const header = req.headers['anchor-api-key'];
  if (!ctx.checkKey(typeof header === 'string' ? header : undefined))
    throw new ApiError(401, 'Invalid API key');
  if (await routeIdentities(ctx.identities, req, res, url)) return;
  if (await routeVolumes(ctx, req, res, url)) return;
  const id = parts[2] ?? '';
  switch (key) {
    case 'POST /v1/sessions': {
      const record = await ctx.sessions.create(await readBody(req));
      return send(res, 200, {
        data: {
          id: record.id,
          cdp_url: cdpUrlFor(ctx.baseUrl(), record.id, ctx.apiKey),
          live_view_url: `${ctx.baseUrl()}/_local/sessions/${record.id}/live`,
        },
      });
    }
    case 'GET /v1/sessions/all/status': {
      // As Anchor: `?tags=a,b` keeps the sessions that carry all of them.
      const wanted = (url.searchParams.get('tags') ?? '').split(',').filter((t) => t !== '');
      const items = ctx.sessions
        .running()
        .filter((r) => wanted.every((t) => Array.isArray(r.tags) && r.tags.includes(t)))
        .map((r) => ({
          session_id: r.id,
          status: r.status,
          tags: Array.isArray(r.tags) ? r.tags : [],
          created_at: r.createdAt,
        }));
      return send(res, 200, { data: { count: items.length, items } });
    }
    case 'DELETE /v1/sessions/all':
      await ctx.sessions.endAll('deleted');
      return send(res, 200, { data: { status: 'success' } });
    case 'GET /v1/sessions/:x':
      return send(res, 200, { data: sessionView(session(ctx, id)) });
    case 'DELETE /v1/sessions/:x':
      await ctx.sessions.end(session(ctx, id).id, 'deleted');
      return send(res, 200, { data: { status: 'success' } });
    case 'POST /v1/profiles': {
      const parsed = profileCreateSchema.safeParse(await readBody(req));
      if (!parsed.success) throw new ApiError(400, describeIssues(parsed.error));
      const body = parsed.data;
      if (await ctx.store.getProfile(body.name))
        throw new ApiError(409, `Profile ${body.name} already exists`);
      if (body.session_id) await ctx.sessions.saveOnEnd(body.session_id, body.name);
      await ctx.store.saveProfile({
        name: body.name,
        ...(body.description ? { description: body.description } : {}),
        created_at: new Date().toISOString(),
        source: 'session',
        ...(body.session_id ? { session_id: body.session_id } : {}),
        status: body.session_id ? 'pending' : 'ready',
      });
      return send(res, 200, { data: { status: 'success' } });
    }
    case 'GET /v1/profiles': {
      const items = (await ctx.store.listProfiles()).map(profileView);
      return send(res, 200, { data: { count: items.length, items } });
    }
    case 'GET /v1/profiles/:x':
      return send(res, 200, { data: profileView(await profile(ctx, id)) });
    case 'DELETE /v1/profiles/:x':
      await ctx.store.deleteProfile((await profile(ctx, id)).name);
      return send(res, 200, { data: { status: 'success' } });
    case 'GET /_local/sessions/:x':
      return send(res, 200, { data: session(ctx, id) });
    case 'POST /_local/sessions/:x/live/revoke': {
      const closed = revokeLiveViews(session(ctx, id).id);
      return send(res, 200, { data: { status: 'revoked', closed } });
    }
    case 'POST /_local/sessions/:x/kill-browser': {
      const pid = await ctx.sessions.killBrowser(session(ctx, id).id);
      return send(res, 200, { data: { status: 'killed', pid } });
    }
    default:
      throw new ApiError(404, `No route for ${method} ${url.pathname}`);
  }
}

/** Route one request; every failure becomes an Anchor-shaped error body. */
export async function handleRequest(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    await route(ctx, req, res);
  } catch (err) {
    const status = err instanceof ApiError ? err.status : 500;
    const message = err instanceof ApiError ? err.message : 'Internal error';
    if (!(err instanceof ApiError)) console.error('[anchor-local]', err);
    if (!res.headersSent) send(res, status, { error: { code: status, message } });
    else res.destroy();
  }
}
