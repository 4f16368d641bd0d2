import { createHash, createHmac, randomBytes } from 'node:crypto';
import { canonicalJson } from './canonical.ts';
import type { Evidence, LedgerEntry } from './types.ts';

/**
 * The hash chain of a job's ledger. Every entry carries the hash of its own content and of the
 * entry before it (`prevHash`); the job item holds the last one (`chainHead`). Changing,
 * removing, inserting or reordering a stored entry breaks the chain at that entry, unless every
 * later hash and the job's head are rewritten too (see DESIGN.md, "Receipts").
 *
 * The content is hashed so that parts of it can be shown redacted and still be checked: each
 * scalar value is replaced by a salted digest of its path and value (a tree of digests of the
 * entry's shape), and the content hash is the hash of that tree. A receipt shows a redacted
 * value's digest instead of its salt, so the value cannot be guessed from it (a card's CVC has
 * a thousand values; its salted digest says nothing about which). Pure functions: the ledger
 * writes with them, `belay receipt verify` checks with them, offline.
 */

/** The version of the hashing below; stored on nothing, part of every hash. */
export const CHAIN_VERSION = 'belay.ledger.chain/1';

/** Attributes of a stored entry that are not its content: the chain's own, the evidence's location, the TTL stamped later. */
export const NOT_CONTENT = [
  'hash',
  'prevHash',
  'contentHash',
  'hashSalt',
  'evidenceRef',
  'expiresAt',
] as const;

/** A JSON value as the content of an entry holds it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** The shape of a value with each scalar replaced by its salted digest (hex). */
export type DigestTree = string | DigestTree[] | { [key: string]: DigestTree };

/**
 * The content of an entry as its hash covers it: every stored attribute except the chain's own
 * and the TTL, with its evidence inline even when it was moved to the evidence store.
 */
export function entryContent(entry: LedgerEntry, evidence: Evidence | undefined): Record<string, JsonValue> {
  const content: Record<string, unknown> = { ...entry };
  for (const key of NOT_CONTENT) delete content[key];
  if (evidence !== undefined) content.evidence = evidence;
  // A JSON-plain copy: what DynamoDB gives back (undefined members gone, key order irrelevant).
  return JSON.parse(JSON.stringify(content)) as Record<string, JsonValue>;
}

/** JSON Pointer (RFC 6901) of a path: `['evidence', 'orderId']` -> `/evidence/orderId`. */
export function pointer(path: readonly (string | number)[]): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** The salt of one value of an entry: derived from the entry's salt and the value's path, so one can be shown without the others. */
export function leafSalt(entrySalt: string, path: string): string {
  return createHmac('sha256', Buffer.from(entrySalt, 'base64url'))
    .update(path)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** The digest of one scalar: sha256 over its salt, its path and its canonical JSON. */
export function leafDigest(salt: string, path: string, value: string | number | boolean | null): string {
  return createHash('sha256')
    .update(`${CHAIN_VERSION}\n${salt}\n${path}\n${canonicalJson(value)}`)
    .digest('hex');
}

/**
 * The digest tree of `value` at `path`: the same objects and arrays, each scalar replaced by
 * `digest(path, scalar)`.
 */
export function digestTree(
  value: JsonValue,
  digest: (path: string, scalar: string | number | boolean | null) => string,
  path: (string | number)[] = [],
): DigestTree {
  if (Array.isArray(value)) return value.map((v, i) => digestTree(v, digest, [...path, i]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, DigestTree> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = digestTree(value[key] as JsonValue, digest, [...path, key]);
    }
    return out;
  }
  return digest(pointer(path), value);
}

/** The hash of an entry's digest tree. */
export function treeHash(tree: DigestTree): string {
  return createHash('sha256')
    .update(`${CHAIN_VERSION}\ncontent\n${canonicalJson(tree)}`)
    .digest('hex');
}

/** The content hash of an entry's content under its salt. */
export function contentHash(content: Record<string, JsonValue>, entrySalt: string): string {
  return treeHash(digestTree(content, (path, v) => leafDigest(leafSalt(entrySalt, path), path, v)));
}

/** An entry's hash: its content hash linked to the hash of the entry before it (none for the first of a chain). */
export function linkHash(prevHash: string | undefined, content: string): string {
  return createHash('sha256')
    .update(`${CHAIN_VERSION}\nlink\n${prevHash ?? ''}\n${content}`)
    .digest('hex');
}

/** A new entry salt: 16 random bytes, base64url. */
export function newEntrySalt(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * The entry with its salt and content hash: what the ledger stores with every entry it
 * prepares. `evidence` is the entry's evidence as stored, inline or in the evidence store. The
 * entry is linked into the chain when it is written (`linkEntry`), where the head is known.
 */
export function sealEntry(entry: LedgerEntry, evidence: Evidence | undefined): LedgerEntry {
  const hashSalt = entry.hashSalt ?? newEntrySalt();
  const sealed: LedgerEntry = { ...entry, hashSalt };
  sealed.contentHash = contentHash(entryContent(sealed, evidence), hashSalt);
  return sealed;
}

/** The sealed entry linked after `prevHash` (none: the first entry of the job's chain). */
export function linkEntry(entry: LedgerEntry, prevHash: string | undefined): LedgerEntry {
  if (entry.contentHash === undefined) throw new Error('linkEntry: the entry is not sealed');
  const { prevHash: _old, ...rest } = entry;
  return {
    ...rest,
    ...(prevHash === undefined ? {} : { prevHash }),
    hash: linkHash(prevHash, entry.contentHash),
  };
}
