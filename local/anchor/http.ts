/** Reading requests and writing answers, shared by the local Anchor service's routes. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.ts';

const MAX_BODY = 1024 * 1024;

/** A JSON answer. */
export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The request body as text (at most 1 MiB: a 413 past it). */
export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'Request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The JSON body (`{}` when empty); a 400 that does not quote it when it is not JSON. */
export async function readBody(req: IncomingMessage): Promise<unknown> {
  const text = (await readText(req)).trim();
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'Malformed JSON body');
  }
}
