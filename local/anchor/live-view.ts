/**
 * The local service's interactive live view, standing in for Anchor's `live_view_url`: a page
 * that shows the session's page as `Page.startScreencast` frames streamed over a WebSocket, and
 * sends the person's mouse and keyboard back as `Input.dispatchMouseEvent`,
 * `Input.dispatchKeyEvent` and `Input.insertText` on the same page target.
 *
 * Tenant-checked and short-lived: the page and the WebSocket upgrade each need the `token` Belay
 * signed for this session and its tenant (`lambdas/lib/browser/live-view-token.ts`, checked
 * against the session's `tenantId` tag); a wrong, expired or other session's or tenant's token is
 * refused (403), and an open view is closed when its token expires. A watch-only token
 * (`interactive: false`) gets the frames and none of its input reaches the browser. Belay revokes
 * a session's views when a takeover's wait ends (`POST /_local/sessions/<id>/live/revoke`): every
 * token signed until then is refused and the views open with one are closed. Revocations are kept
 * in memory (tokens live 15 minutes at most; a restart forgets them). A viewer counts as a client
 * of the session, so the session does not reach its idle timeout while a person works in it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { type LiveViewCheck, verifyLiveViewToken } from '../../lambdas/lib/browser/live-view-token.ts';
import type { SessionManager } from './sessions.ts';
import type { SessionRecord } from './store.ts';

export const LIVE_VIEW_SCRIPT_PATH = '/_local/live-view.js';
const WS_PATH = /^\/_local\/sessions\/([^/]+)\/live\/ws$/;

/** The tenant a session was opened for (the `tenantId:<id>` tag Belay puts on every session). */
export function tenantOf(record: SessionRecord): string | undefined {
  const tags = record.tags;
  if (Array.isArray(tags)) {
    const tag = tags.find((t) => typeof t === 'string' && t.startsWith('tenantId:'));
    return typeof tag === 'string' ? tag.slice('tenantId:'.length) : undefined;
  }
  const value = (tags as Record<string, unknown> | undefined)?.tenantId;
  return typeof value === 'string' ? value : undefined;
}

/** Per session: when its views were last revoked (epoch ms), and the views open now. */
const revokedAt = new Map<string, number>();
const openViews = new Map<string, Set<WebSocket>>();

function check(apiKey: string, record: SessionRecord, token: string | null): LiveViewCheck {
  const verdict = verifyLiveViewToken(
    apiKey,
    token,
    { sessionId: record.id, tenantId: tenantOf(record) },
    Date.now(),
  );
  if (verdict.ok && verdict.claims.issuedAt <= (revokedAt.get(record.id) ?? -1)) {
    return { ok: false, reason: 'revoked' };
  }
  return verdict;
}

/**
 * Refuses every live view token of the session signed until now and closes the views open with
 * one (the takeover's wait ended: the person's access ends with it).
 */
export function revokeLiveViews(sessionId: string, nowMs = Date.now()): number {
  revokedAt.set(sessionId, nowMs);
  const open = [...(openViews.get(sessionId) ?? [])];
  for (const view of open) view.close(4003, 'the takeover ended: this view is closed');
  openViews.delete(sessionId);
  return open.length;
}

const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  'img-src data:',
  "connect-src 'self'",
  // The console embeds it; on one machine the console is on loopback.
  'frame-ancestors http://127.0.0.1:* http://localhost:*',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** `GET /_local/sessions/<id>/live?token=...`: the viewer page, after the token check. */
export function serveLiveViewPage(
  apiKey: string,
  record: SessionRecord | undefined,
  url: URL,
  res: ServerResponse,
): void {
  const verdict = record ? check(apiKey, record, url.searchParams.get('token')) : undefined;
  if (!record || !verdict?.ok) {
    const why = verdict && !verdict.ok ? verdict.reason : 'unknown-session';
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`This live view link is not valid (${why}). Open the job's page in the console for a new one.`);
    return;
  }
  const running = record.status === 'running';
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': PAGE_CSP,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Live view of session ${record.id}</title>
<style>body{margin:0;font:14px system-ui,sans-serif;background:#222;color:#eee}#screen{display:block;max-width:100%;outline:none;cursor:default}#screen:focus{box-shadow:0 0 0 3px #4a9}p{margin:4px 8px}</style>
<script src="${LIVE_VIEW_SCRIPT_PATH}" defer></script></head>
<body><p id="state" role="status">${running ? 'Connecting…' : 'This session has ended.'}</p>
<img id="screen" tabindex="0" alt="The browser of session ${record.id}: click and type here to act in it" data-session="${record.id}" width="1" height="1">
</body></html>`);
}

/** `GET /_local/live-view.js`: the viewer's script (no inline code, so the page's CSP stays strict). */
export function serveLiveViewScript(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
  res.end(LIVE_VIEW_SCRIPT);
}

const LIVE_VIEW_SCRIPT = `(() => {
  const img = document.getElementById('screen');
  const state = document.getElementById('state');
  const token = new URLSearchParams(location.search).get('token') || '';
  const id = img.dataset.session;
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/_local/sessions/' + encodeURIComponent(id) + '/live/ws?token=' + encodeURIComponent(token));
  let meta = null;
  const send = (m) => { if (ws.readyState === 1) ws.send(JSON.stringify(m)); };
  ws.onopen = () => { state.textContent = 'Live: click into the page, then type.'; };
  ws.onclose = (e) => { state.textContent = 'The live view closed' + (e.reason ? ': ' + e.reason : '') + '.'; };
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.type === 'frame') {
      meta = m.metadata;
      img.src = 'data:image/jpeg;base64,' + m.data;
      img.width = Math.round(meta.deviceWidth);
      img.height = Math.round(meta.deviceHeight);
      document.body.dataset.frames = String(Number(document.body.dataset.frames || 0) + 1);
    }
  };
  const at = (e) => {
    const r = img.getBoundingClientRect();
    const w = meta ? meta.deviceWidth : r.width, h = meta ? meta.deviceHeight : r.height;
    return { x: ((e.clientX - r.left) * w) / r.width, y: ((e.clientY - r.top) * h) / r.height };
  };
  const buttons = ['left', 'middle', 'right'];
  img.addEventListener('mousedown', (e) => { img.focus(); e.preventDefault(); send({ type: 'mouse', kind: 'mousePressed', ...at(e), button: buttons[e.button] || 'left', clickCount: e.detail || 1 }); });
  img.addEventListener('mouseup', (e) => { e.preventDefault(); send({ type: 'mouse', kind: 'mouseReleased', ...at(e), button: buttons[e.button] || 'left', clickCount: e.detail || 1 }); });
  let last = 0;
  img.addEventListener('mousemove', (e) => { const now = Date.now(); if (now - last < 50) return; last = now; send({ type: 'mouse', kind: 'mouseMoved', ...at(e), button: 'none', clickCount: 0 }); });
  img.addEventListener('wheel', (e) => { e.preventDefault(); send({ type: 'wheel', ...at(e), deltaX: e.deltaX, deltaY: e.deltaY }); }, { passive: false });
  img.addEventListener('contextmenu', (e) => e.preventDefault());
  img.addEventListener('keydown', (e) => {
    e.preventDefault();
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) send({ type: 'text', text: e.key });
    else send({ type: 'key', key: e.key, code: e.code, keyCode: e.keyCode, modifiers: (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0) });
  });
  img.addEventListener('paste', (e) => { const t = e.clipboardData && e.clipboardData.getData('text'); if (t) { e.preventDefault(); send({ type: 'text', text: t }); } });
})();
`;

/** What a viewer sends: the person's input, as the page script above shapes it. */
type ViewerMessage =
  | { type: 'mouse'; kind: string; x: number; y: number; button: string; clickCount: number }
  | { type: 'wheel'; x: number; y: number; deltaX: number; deltaY: number }
  | { type: 'text'; text: string }
  | { type: 'key'; key: string; code: string; keyCode: number; modifiers: number };

const MOUSE_KINDS = new Set(['mousePressed', 'mouseReleased', 'mouseMoved']);
const BUTTONS = new Set(['none', 'left', 'middle', 'right']);
/** Keys whose press types a character of its own (`text` makes Chromium act on it: Enter submits). */
const KEY_TEXT: Readonly<Record<string, string>> = { Enter: '\r', Tab: '\t' };

/** CDP commands for one viewer message, or none for anything malformed (never passed on as is). */
export function inputCommands(raw: unknown): { method: string; params: Record<string, unknown> }[] {
  const m = raw as ViewerMessage;
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  if (m?.type === 'mouse' && MOUSE_KINDS.has(m.kind) && num(m.x) && num(m.y) && BUTTONS.has(m.button)) {
    return [
      {
        method: 'Input.dispatchMouseEvent',
        params: {
          type: m.kind,
          x: m.x,
          y: m.y,
          button: m.button,
          clickCount: num(m.clickCount) ? Math.min(3, Math.max(0, Math.round(m.clickCount))) : 0,
        },
      },
    ];
  }
  if (m?.type === 'wheel' && num(m.x) && num(m.y) && num(m.deltaX) && num(m.deltaY)) {
    return [
      {
        method: 'Input.dispatchMouseEvent',
        params: { type: 'mouseWheel', x: m.x, y: m.y, deltaX: m.deltaX, deltaY: m.deltaY },
      },
    ];
  }
  if (m?.type === 'text' && typeof m.text === 'string' && m.text.length > 0 && m.text.length <= 10_000) {
    return [{ method: 'Input.insertText', params: { text: m.text } }];
  }
  if (m?.type === 'key' && typeof m.key === 'string' && m.key.length <= 32 && typeof m.code === 'string') {
    const text = KEY_TEXT[m.key];
    const common = {
      key: m.key,
      code: m.code.slice(0, 32),
      windowsVirtualKeyCode: num(m.keyCode) ? m.keyCode : 0,
      modifiers: num(m.modifiers) ? m.modifiers & 15 : 0,
    };
    return [
      {
        method: 'Input.dispatchKeyEvent',
        params: { type: text ? 'keyDown' : 'rawKeyDown', ...common, ...(text ? { text } : {}) },
      },
      { method: 'Input.dispatchKeyEvent', params: { type: 'keyUp', ...common } },
    ];
  }
  return [];
}

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`,
  );
}

/** The session's page target (the one the engine drives: the default context's first page). */
async function pageTarget(port: number): Promise<string | undefined> {
  const targets = (await fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json())) as {
    type?: string;
    webSocketDebuggerUrl?: string;
  }[];
  return targets.find((t) => t.type === 'page' && t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
}

const viewers = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

/** Is this upgrade the live view's WebSocket (then {@link handleLiveViewUpgrade} takes it)? */
export function isLiveViewUpgrade(req: IncomingMessage): boolean {
  return WS_PATH.test(new URL(req.url ?? '/', 'http://localhost').pathname);
}

/**
 * The viewer's WebSocket: token checked again (the page's check is not enough: the socket is
 * what drives the browser), then a CDP connection of its own to the session's page target.
 */
export async function handleLiveViewUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  sessions: SessionManager,
  apiKey: string,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const id = decodeURIComponent(WS_PATH.exec(url.pathname)?.[1] ?? '');
  const record = sessions.get(id);
  const verdict = record ? check(apiKey, record, url.searchParams.get('token')) : undefined;
  if (!record || !verdict?.ok) {
    refuse(
      socket,
      403,
      'Forbidden',
      `live view refused (${verdict && !verdict.ok ? verdict.reason : 'unknown-session'})`,
    );
    return;
  }
  if (record.status !== 'running') {
    refuse(socket, 404, 'Not Found', `session ${id} has ended`);
    return;
  }
  const target = await pageTarget(record.browser.port).catch(() => undefined);
  if (!target) {
    refuse(socket, 502, 'Bad Gateway', 'the session has no page to show');
    return;
  }
  const cdp = new WebSocket(target, { perMessageDeflate: false });
  const opened = await new Promise<boolean>((ok) => {
    cdp.once('open', () => ok(true));
    cdp.once('error', () => ok(false));
  });
  if (!opened || !sessions.addClient(id, socket as Socket)) {
    cdp.close();
    refuse(socket, 502, 'Bad Gateway', 'the browser is not reachable');
    return;
  }
  viewers.handleUpgrade(req, socket, head, (viewer) => {
    const open = openViews.get(id) ?? new Set<WebSocket>();
    openViews.set(id, open.add(viewer));
    let nextId = 1;
    const command = (method: string, params: Record<string, unknown>): void => {
      if (cdp.readyState === WebSocket.OPEN) cdp.send(JSON.stringify({ id: nextId++, method, params }));
    };
    const expiry = setTimeout(
      () => viewer.close(4001, 'the link expired: open the job page again'),
      Math.max(0, verdict.claims.expiresAt * 1000 - Date.now()),
    );
    const closeBoth = (): void => {
      clearTimeout(expiry);
      openViews.get(id)?.delete(viewer);
      if (cdp.readyState === WebSocket.OPEN || cdp.readyState === WebSocket.CONNECTING) cdp.close();
      if (viewer.readyState === WebSocket.OPEN) viewer.close(1000, 'the session view ended');
    };
    cdp.on('message', (data: RawData) => {
      const message = JSON.parse(data.toString()) as {
        method?: string;
        params?: { data?: string; metadata?: unknown; sessionId?: number };
      };
      if (message.method !== 'Page.screencastFrame' || !message.params) return;
      command('Page.screencastFrameAck', { sessionId: message.params.sessionId });
      if (viewer.readyState === WebSocket.OPEN) {
        viewer.send(
          JSON.stringify({ type: 'frame', data: message.params.data, metadata: message.params.metadata }),
        );
      }
    });
    viewer.on('message', (data: RawData) => {
      // A watch-only view sends nothing on to the browser, whatever its page script sends.
      if (!verdict.claims.interactive) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        return;
      }
      for (const c of inputCommands(parsed)) command(c.method, c.params);
    });
    cdp.on('close', closeBoth);
    cdp.on('error', closeBoth);
    viewer.on('close', closeBoth);
    viewer.on('error', closeBoth);
    command('Page.enable', {});
    command('Page.startScreencast', { format: 'jpeg', quality: 70, everyNthFrame: 1 });
  });
}
