import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { InvalidInputError } from './errors.ts';

/**
 * Where evidence too large for a ledger item goes (S3 in the cloud, a directory locally).
 * The ledger entry keeps only the returned reference.
 */
export interface EvidenceStore {
  /** Stores `body` under `key` (`<tenant>/<job>/<entryId>.json`) and returns a reference to it. */
  put(key: string, body: string): Promise<string>;
  /** Returns the body stored under a reference `put` returned. */
  get(ref: string): Promise<string>;
}

const FILE_REF_PREFIX = 'file:';
const KEY_SEGMENT = /^[A-Za-z0-9_.:-]+$/;

/**
 * An {@link EvidenceStore} on the local filesystem: `put('t/j/e.json', ...)` writes
 * `<dir>/t/j/e.json` (atomically, by rename) and returns `file:t/j/e.json`. Keys and
 * references that would leave `dir` are refused.
 *
 * @example
 * const ledger = createLedger({ doc, tableName, evidenceStore: createFileEvidenceStore('.local/evidence') });
 */
export function createFileEvidenceStore(dir: string): EvidenceStore {
  const root = resolve(dir);
  const pathOf = (key: string): string => {
    const segments = key.split('/');
    if (segments.some((s) => !KEY_SEGMENT.test(s) || s === '.' || s === '..')) {
      throw new InvalidInputError('evidence key', `"${key}" is not a relative path of safe segments`);
    }
    const path = join(root, ...segments);
    if (!path.startsWith(root + sep))
      throw new InvalidInputError('evidence key', `"${key}" leaves the store`);
    return path;
  };
  return {
    async put(key, body) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, body, 'utf8');
      await rename(tmp, path);
      return FILE_REF_PREFIX + key;
    },
    async get(ref) {
      if (!ref.startsWith(FILE_REF_PREFIX)) {
        throw new InvalidInputError('evidence ref', `"${ref}" is not a file evidence reference`);
      }
      return readFile(pathOf(ref.slice(FILE_REF_PREFIX.length)), 'utf8');
    },
  };
}
