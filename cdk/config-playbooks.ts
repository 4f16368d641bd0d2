/**
 * The `belay:playbooks` context value: playbook folders bundled into the handlers besides the
 * repository's `playbooks/` (and `BELAY_PLAYBOOKS_DIRS`), as `npm start -- --playbooks` does
 * locally. A folder (relative to where `cdk` runs), several comma-separated, or a JSON list.
 */
import { resolve } from 'node:path';
import { ConfigError } from './errors.ts';

const EXPECTED = 'a playbook folder, several separated by commas, or a list of folders';

/**
 * Parses `belay:playbooks` into absolute folders (default none).
 * @example parsePlaybookDirs('belay:playbooks', '../my-playbooks,../more'); // ['/abs/my-playbooks', '/abs/more']
 */
export function parsePlaybookDirs(
  key: string,
  value: unknown,
  cwd: string = process.cwd(),
): readonly string[] {
  if (value === undefined || value === '') return Object.freeze([]);
  let list: unknown = value;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) {
      try {
        list = JSON.parse(text);
      } catch (cause) {
        throw new ConfigError(key, value, `${EXPECTED} (as JSON)`, { cause });
      }
    } else list = text.split(',');
  }
  if (!Array.isArray(list) || list.some((d) => typeof d !== 'string' || d.trim() === ''))
    throw new ConfigError(key, value, EXPECTED);
  return Object.freeze((list as string[]).map((d) => resolve(cwd, d.trim())));
}
