/**
 * The CDP WebSocket proxy. The SDK's `browser.connect(id)` opens
 * `ws://<base>?apiKey=<key>&sessionId=<id>`, and the service hands out the same URL as
 * `cdp_url`, so every CDP client passes here: the service counts them (idle timeout) and the
 * browser's own port never leaves the machine's loopback. The upgrade is forwarded byte for
 * byte to the session's browser endpoint; Chromium answers the handshake itself.
 */
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SessionManager } from './sessions.ts';

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
