/**
 * The CDP WebSocket proxy. The SDK's `browser.connect(id)` opens
 * `ws://<base>?apiKey=<key>&sessionId=<id>`, and the service hands out the same URL as
 * `cdp_url`, so every CDP client passes here: the service counts them (idle timeout) and the
 * browser's own port never leaves the machine's loopback. The upgrade is forwarded byte for
 * byte to the session's browser endpoint; Chromium answers the handshake itself.
 *
 * A session with volumes mounted is relayed message by message instead: the relay sets the
 * browser's downloads to the session's own folder in the writable volume's `downloads/`
 * (`downloads/<session id>/`, or refuses them when every mount is read-only) on each connection,
 * and a client's own `Browser.setDownloadBehavior` gets that folder put in, so downloads land in
 * the volume whatever the client asks (Playwright's `connectOverCDP` points them at a folder of
 * its own machine, which a remote browser lacks). Downloads are saved "allowAndName": each file
 * is named by the browser's id for the download, which the page's `Page.downloadWillBegin`
 * reports, so a job finds the file its own click started and never one of the same name that
 * another session (another tenant's job) saved at the same moment.
 */
import { mkdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { SessionManager } from './sessions.ts';

/** Large enough for any CDP message a test sends or a screenshot answers. */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
const relayServer = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  maxPayload: MAX_MESSAGE_BYTES,
});

/** What the session's mounts make of downloads: into the writable volume's `downloads/`, or none. */
export interface DownloadMount {
  /** The folder downloads land in; undefined when every mount is read-only (downloads refused). */
  downloadPath?: string;
}

/** The id of the relay's own command (answered to nobody). */
const RELAY_COMMAND_ID = 2_147_483_000;

function downloadBehavior(mount: DownloadMount): Record<string, unknown> {
  return mount.downloadPath
    ? { behavior: 'allowAndName', downloadPath: mount.downloadPath }
    : { behavior: 'deny' };
}

/**
 * A client's `Browser.setDownloadBehavior` with the mount's folder put in (its other fields,
 * such as `eventsEnabled`, kept); any other message unchanged.
 */
export function rewriteDownloadBehavior(
  data: Buffer,
  isBinary: boolean,
  mount: DownloadMount,
): Buffer | string {
  if (isBinary || !data.includes('Browser.setDownloadBehavior')) return data;
  try {
    const msg = JSON.parse(data.toString('utf8')) as { method?: unknown; params?: Record<string, unknown> };
    if (msg.method !== 'Browser.setDownloadBehavior') return data;
    const { downloadPath: _asked, behavior: _behavior, ...rest } = msg.params ?? {};
    return JSON.stringify({ ...msg, params: { ...rest, ...downloadBehavior(mount) } });
  } catch {
    return data;
  }
}

function relayWithVolumes(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  sessions: SessionManager,
  id: string,
  wsEndpoint: string,
  mount: DownloadMount,
): void {
  relayServer.handleUpgrade(req, client, head, (down) => {
    if (!sessions.addClient(id, client as Socket)) {
      down.close(1011, 'session has ended');
      return;
    }
    const up = new WebSocket(wsEndpoint, { perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
    const pending: { data: Buffer; isBinary: boolean }[] = [];
    const closeBoth = (): void => {
      down.terminate();
      up.terminate();
    };
    up.on('open', () => {
      // Chromium keeps a download setting only while the connection that made it is open: each
      // client's connection gets the mount's, whether or not the client asks for one.
      up.send(
        JSON.stringify({
          id: RELAY_COMMAND_ID,
          method: 'Browser.setDownloadBehavior',
          params: downloadBehavior(mount),
        }),
      );
      for (const m of pending.splice(0)) up.send(m.data, { binary: m.isBinary });
    });
    up.on('message', (data: Buffer, isBinary) => {
      if (!isBinary && data.includes(`"id":${RELAY_COMMAND_ID},`)) return;
      down.send(data, { binary: isBinary });
    });
    down.on('message', (data: Buffer, isBinary) => {
      const out = rewriteDownloadBehavior(data, isBinary, mount);
      const binary = typeof out !== 'string' && isBinary;
      if (up.readyState === WebSocket.OPEN) up.send(out, { binary });
      else pending.push({ data: Buffer.from(out), isBinary: binary });
    });
    up.on('close', closeBoth);
    up.on('error', closeBoth);
    down.on('close', closeBoth);
    down.on('error', closeBoth);
  });
}

/** Headers Chromium would refuse or that belong to the hop to the proxy. */
const DROPPED = new Set(['host', 'origin', 'anchor-api-key', 'content-length']);

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ error: { code: status, message } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Handle an HTTP upgrade aimed at the base URL. `checkKey` compares API keys in constant time. */
export function proxyCdpUpgrade(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  sessions: SessionManager,
  checkKey: (key: string | undefined) => boolean,
): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headerKey = req.headers['anchor-api-key'];
  const key = url.searchParams.get('apiKey') ?? (typeof headerKey === 'string' ? headerKey : undefined);
  if (!checkKey(key)) {
    refuse(client, 401, 'Unauthorized', 'Invalid API key');
    return;
  }
  if (url.pathname !== '/' || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
    refuse(client, 404, 'Not Found', 'Not found');
    return;
  }
  const id = url.searchParams.get('sessionId') ?? '';
  const record = sessions.get(id);
  if (record?.status !== 'running') {
    refuse(client, 404, 'Not Found', record ? `Session ${id} has ended` : 'Session not found');
    return;
  }
  const { port, wsEndpoint } = record.browser;
  if ((record.volumes ?? []).length > 0) {
    const writable = record.volumes?.find((v) => !v.readOnly);
    const downloadPath = writable ? sessions.downloadsDir(writable.id, id) : undefined;
    // Chromium saves into an existing folder only.
    if (downloadPath) mkdirSync(downloadPath, { recursive: true });
    relayWithVolumes(req, client, head, sessions, id, wsEndpoint, downloadPath ? { downloadPath } : {});
    return;
  }
  const upstream: Socket = connect({ host: '127.0.0.1', port });
  const closeBoth = (): void => {
    client.destroy();
    upstream.destroy();
  };
  let piped = false;
  upstream.once('error', () => {
    if (!piped) refuse(client, 502, 'Bad Gateway', 'Browser not reachable');
    else closeBoth();
  });
  client.once('error', closeBoth);
  client.once('close', closeBoth);
  upstream.once('close', () => {
    if (piped) closeBoth();
  });
  upstream.once('connect', () => {
    piped = true;
    if (!sessions.addClient(id, upstream)) {
      piped = false;
      refuse(client, 404, 'Not Found', `Session ${id} has ended`);
      upstream.destroy();
      return;
    }
    const lines = [`GET ${new URL(wsEndpoint).pathname} HTTP/1.1`, `Host: 127.0.0.1:${port}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] ?? '';
      if (!DROPPED.has(name.toLowerCase())) lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`);
    }
    upstream.setNoDelay(true);
    if ('setNoDelay' in client && typeof client.setNoDelay === 'function') client.setNoDelay(true);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
}
