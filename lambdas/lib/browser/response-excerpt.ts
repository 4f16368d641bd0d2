import { maskSecrets, maskSecretText, type SecretScope } from '../redact.ts';

/**
 * A short excerpt of the answer to a write's committing request, kept in its receipt: what the
 * application said when it took the write (an order's number, a record's id), never more than
 * {@link MAX_EXCERPT_BYTES}. JSON keeps its shape with secret-named members masked; HTML is read
 * as its visible text; other text as it is; anything else has no excerpt.
 *
 * It is masked as the ledger masks what it stores (registered secrets, secret-named members,
 * tokens and API keys; the job's sensitive inputs as their placeholders), never as people see it:
 * an answer that echoes the job's phone or invoice number keeps it exactly, and people's exits
 * (the API's views, the receipt, the console) mask card-like numbers when they read it.
 */

/** Bytes an excerpt keeps (UTF-8), before the ellipsis. */
export const MAX_EXCERPT_BYTES = 300;
/** Bytes of the body read at most: an excerpt needs only its start. */
export const MAX_READ_BYTES = 64 * 1024;

/** The start of `text` in at most `max` UTF-8 bytes, cut at a character, with `…` when cut. */
export function clip(text: string, max = MAX_EXCERPT_BYTES): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return `${out}…`;
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/**
 * The visible text of an HTML document, roughly: no head, scripts, styles or templates, no tags,
 * the common entities decoded, spaces collapsed. An excerpt is a hint for a person (the receipt's
 * proof is the ledger's evidence), so a rough reading is enough and needs no HTML parser in RunStep.
 */
export function htmlText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(head|script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<(input|textarea|select)\b[^>]*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X'))
        return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
      if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
      return ENTITIES[name.toLowerCase()] ?? m;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The excerpt of an answer's body, or `undefined` when it says nothing (empty, binary, a
 * redirect's, JSON that does not parse). Secret-named JSON members are masked; so are bearer tokens, API keys and the
 * registered secrets of `scope`; `hide` turns the job's sensitive inputs into their placeholders
 * (before the excerpt is cut, so no part of one is left). Numbers stay as they are.
 */
export function responseExcerpt(
  contentType: string | undefined,
  body: Buffer | undefined,
  scope?: SecretScope,
  hide: (text: string) => string = (text) => text,
): string | undefined {
  if (body === undefined || body.length === 0) return undefined;
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const raw = body.subarray(0, MAX_READ_BYTES).toString('utf8');
  let text: string;
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      text = JSON.stringify(maskSecrets(JSON.parse(body.toString('utf8')) as unknown, scope));
    } catch {
      // Cut short (only the first MAX_READ_BYTES are read) or not JSON at all: its secret-named
      // members cannot be found, so it says nothing rather than something unmasked.
      return undefined;
    }
  } else if (type === 'text/html' || type === 'application/xhtml+xml') text = htmlText(raw);
  else if (type.startsWith('text/')) text = raw.replace(/\s+/g, ' ').trim();
  else return undefined;
  const masked = maskSecretText(hide(text), scope);
  return masked === '' ? undefined : clip(masked);
}
