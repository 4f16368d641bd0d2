import { BadRequestError, PayloadTooLargeError } from './errors.ts';
import type { HttpApiEvent } from './events.ts';

/**
 * Request bodies: decoded from API Gateway's base64 when flagged, bounded in size (413),
 * and parsed as JSON (400) only where a route wants JSON: the webhook route needs the raw
 * bytes for its signature.
 */

/** The body as text; a body over `maxBytes` is a 413. */
export function rawBody(event: Pick<HttpApiEvent, 'body' | 'isBase64Encoded'>, maxBytes: number): string {
  if (event.body === undefined || event.body === null) return '';
  const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (bytes.byteLength > maxBytes) throw new PayloadTooLargeError(maxBytes);
  return event.isBase64Encoded ? bytes.toString('utf8') : event.body;
}

/**
 * The body parsed as JSON; empty or malformed is a 400. The parser's own message is not
 * passed on: it quotes the text around the error, which may be a one-time code or a password.
 */
export function jsonBody(event: Pick<HttpApiEvent, 'body' | 'isBase64Encoded'>, maxBytes: number): unknown {
  const text = rawBody(event, maxBytes);
  if (text.trim() === '') {
    throw new BadRequestError(
      'invalid_json',
      'the request needs a JSON body (Content-Type: application/json)',
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BadRequestError('invalid_json', 'the body is not valid JSON (Content-Type: application/json)');
  }
}
