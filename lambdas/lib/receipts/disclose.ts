import { canonicalJson } from '../ledger/canonical.ts';
import {
  type DigestTree,
  digestTree,
  type JsonValue,
  leafDigest,
  leafSalt,
  pointer,
  treeHash,
} from '../ledger/chain.ts';
import { REDACTED } from '../redact.ts';
import type { EntryProof } from './format.ts';

/**
 * Showing an entry redacted while keeping its hash checkable: every value people may see is
 * shown with its salt; every value the redaction changed is replaced by what people see of it
 * (`[redacted]`, `[card ****4242]`) and its digest, so the entry's content hash comes out the
 * same without the value (see `lambdas/lib/ledger/chain.ts`).
 */

type Scalar = string | number | boolean | null;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** What people see where the stored value is redacted: the view's value when it is JSON, else the redaction mark. */
function displayed(view: unknown): JsonValue {
  return view === undefined ? REDACTED : (JSON.parse(JSON.stringify(view)) as JsonValue);
}

/**
 * The content of an entry as people see it and the proof of it: `stored` is the entry's content
 * as hashed (`entryContent`), `view` the same entry as the API shows it (keys the view adds are
 * left out; values it changed are hidden), `entrySalt` the entry's `hashSalt`.
 */
export function disclose(
  stored: Record<string, JsonValue>,
  view: Record<string, unknown>,
  entrySalt: string,
): { content: Record<string, JsonValue>; proof: EntryProof } {
  const salts: Record<string, string> = {};
  const hidden: Record<string, DigestTree> = {};
  const digest = (path: string, v: Scalar): string => leafDigest(leafSalt(entrySalt, path), path, v);
  const hide = (value: JsonValue, seen: unknown, path: (string | number)[]): JsonValue => {
    hidden[pointer(path)] = digestTree(value, digest, path);
    return displayed(seen);
  };
  const walk = (value: JsonValue, seen: unknown, path: (string | number)[]): JsonValue => {
    if (Array.isArray(value)) {
      if (!Array.isArray(seen) || seen.length !== value.length) return hide(value, seen, path);
      return value.map((v, i) => walk(v, seen[i], [...path, i]));
    }
    if (value !== null && typeof value === 'object') {
      if (!isObject(seen)) return hide(value, seen, path);
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(value))
        out[key] = walk(value[key] as JsonValue, seen[key], [...path, key]);
      return out;
    }
    if (canonicalJson(seen) !== canonicalJson(value)) return hide(value, seen, path);
    salts[pointer(path)] = leafSalt(entrySalt, pointer(path));
    return value;
  };
  const content = walk(stored, view, []) as Record<string, JsonValue>;
  if (Object.keys(hidden).length === 0) return { content, proof: { salt: entrySalt } };
  return { content, proof: { salts, hidden } };
}

/** A proof that does not fit its content: a value with no salt, a hidden value that is not there. */
export class ProofMismatch extends Error {}

/**
 * The content hash of an entry from what a receipt shows of it: the digest tree rebuilt from
 * the shown values and their salts, with the hidden values' digests in place.
 *
 * @throws ProofMismatch when the proof does not cover the content
 */
export function shownContentHash(content: Record<string, JsonValue>, proof: EntryProof): string {
  const hidden = 'hidden' in proof ? proof.hidden : {};
  const used = new Set<string>();
  const walk = (value: JsonValue, path: (string | number)[]): DigestTree => {
    const at = pointer(path);
    if (Object.hasOwn(hidden, at)) {
      used.add(at);
      return hidden[at] as DigestTree;
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, i]));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, DigestTree> = {};
      for (const key of Object.keys(value).sort()) out[key] = walk(value[key] as JsonValue, [...path, key]);
      return out;
    }
    const salt = 'salt' in proof ? leafSalt(proof.salt, at) : proof.salts[at];
    if (typeof salt !== 'string') throw new ProofMismatch(`no salt for the value at ${at || '/'}`);
    return leafDigest(salt, at, value);
  };
  const tree = walk(content, []);
  const stray = Object.keys(hidden).filter((at) => !used.has(at));
  if (stray.length > 0)
    throw new ProofMismatch(`hidden values where the entry has none: ${stray.join(', ')}`);
  return treeHash(tree);
}
