/**
 * The Volumes and Volume Files paths of the local Anchor service, in the real API's shape
 * (`{ data: ... }`, `{ error: { code, message } }`):
 *
 * | method | path | does |
 * |---|---|---|
 * | POST | /v1/volumes | create (`{ name }`); 409 for a name in use, 403 past the team's 10 |
 * | GET | /v1/volumes | list |
 * | GET, DELETE | /v1/volumes/{id} | one; delete refused while a running session mounts it |
 * | GET | /v1/volumes/{id}/files?path=&recursive= | a folder's entries (or the tree) |
 * | POST | /v1/volumes/{id}/files | multipart `file` + `path`: write one file (at most 10 MB) |
 * | GET | /v1/volumes/{id}/files/download?path=&redirect= | a signed URL to the file (or a 302 to it) |
 *
 * The signed URL is `/_local/volume-files/...`, good for five minutes, checked with an HMAC
 * under the service's key (Anchor answers with a pre-signed storage URL).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.ts';
import { readBody, send } from './http.ts';
import type { SessionManager } from './sessions.ts';
import type { VolumeRecord, VolumeStore } from './volumes.ts';
import { volumePath } from './volumes.ts';

/** Anchor's multipart limit ("Multipart uploads are limited to 10 MB"). */
export const MAX_MULTIPART_BYTES = 10 * 1024 * 1024;
const URL_LIFETIME_MS = 5 * 60_000;

export interface VolumeRouteContext {
  volumes: VolumeStore;
  sessions: SessionManager;
  baseUrl: () => string;
  apiKey: string;
}

function sign(apiKey: string, id: string, path: string, expires: number): string {
  return createHmac('sha256', apiKey).update(`${id}\n${path}\n${expires}`).digest('hex');
}

async function readMultipart(req: IncomingMessage): Promise<FormData> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) throw new ApiError(400, 'body: must be multipart/form-data');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_MULTIPART_BYTES) {
      throw new ApiError(
        413,
        'file: multipart uploads are limited to 10 MB; use an upload URL for larger files',
      );
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return await new Request('http://local/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: Buffer.concat(chunks),
    }).formData();
  } catch {
    throw new ApiError(400, 'body: malformed multipart form');
  }
}

async function volumeOf(ctx: VolumeRouteContext, id: string): Promise<VolumeRecord> {
  const record = await ctx.volumes.get(decodeURIComponent(id));
  if (!record) throw new ApiError(404, 'Volume not found');
  return record;
}

/** Serves a signed file URL (no API key: the signature is the grant). True when it answered. */
export async function routeVolumeDownload(
  ctx: VolumeRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts[0] !== '_local' || parts[1] !== 'volume-files' || req.method !== 'GET') return false;
  const id = parts[2] ?? '';
  const path = url.searchParams.get('path') ?? '';
  const expires = Number(url.searchParams.get('expires'));
  const given = Buffer.from(url.searchParams.get('signature') ?? '');
  const expected = Buffer.from(sign(ctx.apiKey, id, path, expires));
  if (given.length !== expected.length || !timingSafeEqual(given, expected) || !(expires > Date.now())) {
    throw new ApiError(403, 'The download URL is invalid or has expired');
  }
  const bytes = await ctx.volumes.readFile((await volumeOf(ctx, id)).id, path);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
  res.end(bytes);
  return true;
}

/** The `/v1/volumes` paths (API key already checked). True when it answered. */
export async function routeVolumes(
  ctx: VolumeRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts[0] !== 'v1' || parts[1] !== 'volumes') return false;
  const method = req.method ?? 'GET';
  const id = parts[2];
  const sub = parts.slice(3).join('/');
  if (id === undefined) {
    if (method === 'POST') {
      const body = (await readBody(req)) as { name?: unknown } | null;
      const record = await ctx.volumes.create(body && typeof body === 'object' ? body.name : undefined);
      send(res, 200, { data: record });
      return true;
    }
    if (method === 'GET') {
      const items = await ctx.volumes.list();
      send(res, 200, { data: { count: items.length, items } });
      return true;
    }
    return false;
  }
  const volume = await volumeOf(ctx, id);
  if (sub === '' && method === 'GET') {
    send(res, 200, { data: volume });
    return true;
  }
  if (sub === '' && method === 'DELETE') {
    const mounted = ctx.sessions.running().filter((s) => (s.volumes ?? []).some((m) => m.id === volume.id));
    if (mounted.length > 0) {
      throw new ApiError(409, `Volume is mounted by ${mounted.length} running session(s); end them first`);
    }
    await ctx.volumes.delete(volume.id);
    send(res, 200, { data: { status: 'success' } });
    return true;
  }
  if (sub === 'files' && method === 'GET') {
    const folder = url.searchParams.get('path') ?? undefined;
    const recursive = url.searchParams.get('recursive') === 'true';
    const items = await ctx.volumes.listFiles(volume.id, folder || undefined, recursive);
    send(res, 200, { data: { count: items.length, items } });
    return true;
  }
  if (sub === 'files' && method === 'POST') {
    const form = await readMultipart(req);
    const file = form.get('file');
    if (!(file instanceof Blob)) throw new ApiError(400, 'file: required (a multipart file field)');
    const pathField = form.get('path');
    const name = 'name' in file && typeof file.name === 'string' ? file.name : '';
    const path = volumePath(typeof pathField === 'string' && pathField !== '' ? pathField : name);
    const entry = await ctx.volumes.writeFile(volume.id, path, new Uint8Array(await file.arrayBuffer()));
    send(res, 200, { data: entry });
    return true;
  }
  if (sub === 'files/download' && method === 'GET') {
    const path = volumePath(url.searchParams.get('path') ?? '');
    await ctx.volumes.readFile(volume.id, path); // a 404 now, not at the URL
    const expires = Date.now() + URL_LIFETIME_MS;
    const signed = new URL(`${ctx.baseUrl()}/_local/volume-files/${volume.id}`);
    signed.searchParams.set('path', path);
    signed.searchParams.set('expires', String(expires));
    signed.searchParams.set('signature', sign(ctx.apiKey, volume.id, path, expires));
    if (url.searchParams.get('redirect') === 'true') {
      res.writeHead(302, { location: signed.toString() });
      res.end();
      return true;
    }
    send(res, 200, { data: { url: signed.toString(), expires_at: new Date(expires).toISOString() } });
    return true;
  }
  return false;
}
