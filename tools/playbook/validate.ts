/**
 * `npm run playbook -- validate <file|dir>...`: checks playbooks with no stack: a declarative
 * file's schema, what the schema cannot say, its compile and its lints (`lint.ts`), each problem
 * with its line; a TypeScript playbook folder's module, loaded and checked as `npm start` would.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Playbook } from '../../lambdas/lib/playbooks/contract.ts';
import { compileDeclarative } from '../../lambdas/lib/playbooks/declarative/compile.ts';
import { lintDeclarative } from '../../lambdas/lib/playbooks/declarative/lint.ts';
import { parseDeclarative } from '../../lambdas/lib/playbooks/declarative/read.ts';
import {
  DECLARATIVE,
  findPlaybookFiles,
  type PlaybookFile,
} from '../../lambdas/lib/playbooks/discovery/find.ts';
import { loadModule } from '../../lambdas/lib/playbooks/discovery/load.ts';
import { displayPath } from '../../lambdas/lib/playbooks/discovery/paths.ts';
import { PlaybookFileError } from '../../lambdas/lib/playbooks/errors.ts';
import { createPlaybookRegistry } from '../../lambdas/lib/playbooks/registry.ts';

/** What validating one playbook file found. */
export interface Validated {
  /** The file, as messages name it. */
  source: string;
  /** `name@version` and its number of steps, when it compiled. */
  id?: string;
  steps?: number;
  problems: string[];
}

/** The playbook files a path names: a declarative file, a playbook module (`index.ts`), or a folder of them. */
async function filesOf(path: string): Promise<PlaybookFile[] | string> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return `${path}: no such file or folder`;
  if (info.isFile()) {
    if (DECLARATIVE.test(path)) return [{ file: path, kind: 'declarative' }];
    if (basename(path) === 'index.ts') return [{ file: path, kind: 'module' }];
    return `${path}: not a playbook file (*.playbook.yaml, *.playbook.yml, *.playbook.json, or a folder's index.ts)`;
  }
  // A playbook folder of its own (index.ts), or a folder of playbooks.
  const own = join(path, 'index.ts');
  if (
    await stat(own).then(
      (s) => s.isFile(),
      () => false,
    )
  )
    return [{ file: own, kind: 'module' }];
  return findPlaybookFiles([path]);
}

/**
 * A declarative playbook's text checked with no stack: its schema, what the schema cannot say,
 * its lints, then its compile. The compiled playbook, or every problem found (with its line).
 */
export function checkDeclarative(
  text: string,
  source: string,
): { playbook: Playbook; problems: [] } | { problems: string[] } {
  const parsed = parseDeclarative(text, lintDeclarative);
  if (!parsed.ok) return { problems: parsed.problems };
  try {
    return { playbook: compileDeclarative(parsed.spec, source), problems: [] };
  } catch (err) {
    return { problems: err instanceof PlaybookFileError ? [...err.problems] : [(err as Error).message] };
  }
}

async function validateDeclarative(file: string): Promise<Validated> {
  const source = displayPath(file);
  const checked = checkDeclarative(await readFile(file, 'utf8'), source);
  return 'playbook' in checked
    ? { source, id: checked.playbook.id, steps: checked.playbook.steps.length, problems: [] }
    : { source, problems: checked.problems };
}

async function validateModule(file: string): Promise<Validated> {
  const source = displayPath(file);
  try {
    // Loaded as `npm start` loads it, and checked as the registry checks every playbook it loads.
    const { playbook: loaded } = await loadModule({ file, kind: 'module' });
    const playbook = createPlaybookRegistry([{ source, playbook: loaded }]).get(loaded.id);
    return { source, id: playbook.id, steps: playbook.steps.length, problems: [] };
  } catch (err) {
    return {
      source,
      problems: err instanceof PlaybookFileError ? [...err.problems] : [(err as Error).message],
    };
  }
}

/**
 * Validates every playbook the paths name.
 * @returns one result per playbook file, and the paths that name none (as messages)
 */
export async function validatePaths(
  paths: readonly string[],
): Promise<{ results: Validated[]; missing: string[] }> {
  const results: Validated[] = [];
  const missing: string[] = [];
  for (const path of paths) {
    const files = await filesOf(path).catch((err: Error) => `${path}: ${err.message}`);
    if (typeof files === 'string') {
      missing.push(files);
      continue;
    }
    if (files.length === 0) missing.push(`${path}: no playbook in this folder`);
    for (const f of files)
      results.push(
        f.kind === 'declarative' ? await validateDeclarative(f.file) : await validateModule(f.file),
      );
  }
  return { results, missing };
}

/** The report `validate` prints: one line per playbook, its problems under it. */
export function formatValidated(results: readonly Validated[]): string {
  return results
    .map((r) =>
      r.problems.length === 0
        ? `ok    ${r.source} (${r.id}, ${r.steps} step${r.steps === 1 ? '' : 's'})`
        : [`FAIL  ${r.source}`, ...r.problems.map((p) => `        ${p}`)].join('\n'),
    )
    .join('\n');
}
