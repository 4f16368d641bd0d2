/**
 * Finding playbooks: every `<dir>/<name>/index.ts` (a TypeScript module whose default export is
 * the playbook) and every `<dir>/<name>.playbook.yaml`, `.yml` or `.json` (the declarative form)
 * in each playbook folder. Names starting with `.` or `_`, and `node_modules`, are skipped.
 */
import { readdirSync, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { PlaybookDirectoryError } from '../errors.ts';
import { REPO_ROOT } from './repo.ts';

/** The repository's own playbook folder: the demo playbooks. */
export const REPO_PLAYBOOKS_DIR: string = join(REPO_ROOT, 'playbooks');

/** The variable naming more playbook folders (path-delimited, as `PATH`). */
export const PLAYBOOKS_DIRS_ENV = 'BELAY_PLAYBOOKS_DIRS';

/** A playbook file found. */
export interface PlaybookFile {
  /** Absolute path. */
  file: string;
  kind: 'module' | 'declarative';
}

/** A declarative playbook file's name. */
export const DECLARATIVE = /\.playbook\.(ya?ml|json)$/;

/**
 * The playbook folders to use: the repository's `playbooks/`, then `BELAY_PLAYBOOKS_DIRS`, then
 * `extra` (`--playbooks`, `belay:playbooks`), each absolute, without repeats.
 */
export function playbookDirs(extra: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = (env[PLAYBOOKS_DIRS_ENV] ?? '').split(delimiter).filter((d) => d.trim() !== '');
  const all = [REPO_PLAYBOOKS_DIR, ...fromEnv, ...extra].map((d) => resolve(d));
  return [...new Set(all.map((d) => d.replace(/\/+$/, '')))];
}

/**
 * The playbook files in `dirs`, folder by folder, files by name (synchronous: the CDK app
 * builds its stack synchronously and generates the registry module while it does).
 * @throws PlaybookDirectoryError for a folder that does not exist or is not a folder
 */
export function findPlaybookFilesSync(dirs: readonly string[]): PlaybookFile[] {
  const found: PlaybookFile[] = [];
  const info = (path: string): ReturnType<typeof statSync> | undefined => {
    try {
      return statSync(path);
    } catch {
      return undefined;
    }
  };
  for (const dir of dirs) {
    const here = info(dir);
    if (!here) throw new PlaybookDirectoryError(dir, 'does not exist or cannot be read');
    if (!here.isDirectory()) throw new PlaybookDirectoryError(dir, 'is not a folder');
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('.') || name.startsWith('_') || name === 'node_modules') continue;
      const path = join(dir, name);
      const entry = info(path);
      if (entry?.isDirectory()) {
        const index = join(path, 'index.ts');
        if (info(index)?.isFile()) found.push({ file: index, kind: 'module' });
      } else if (entry?.isFile() && DECLARATIVE.test(name)) {
        found.push({ file: path, kind: 'declarative' });
      }
    }
  }
  return found;
}

/** {@link findPlaybookFilesSync}, for callers that await. */
export async function findPlaybookFiles(dirs: readonly string[]): Promise<PlaybookFile[]> {
  return findPlaybookFilesSync(dirs);
}
