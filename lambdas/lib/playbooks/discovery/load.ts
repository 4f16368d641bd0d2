/**
 * Loading the playbooks found in the playbook folders into a registry, in this process: a
 * TypeScript module is imported (its default export is the playbook), a declarative file is
 * parsed and compiled. Whatever is wrong stops here, with the file named: a module that does
 * not load or exports no valid playbook, a declarative file that is not valid (line and field),
 * two playbooks with one id.
 *
 * Files outside the repository import `belay/sdk`, `zod` and `playwright-core` from Belay's own
 * tree: under tsx that needs `registerSdkResolution()` first (`npm start`, `npm run playbook`
 * and `cdk synth` call it); in a bundle, `lambdas/bundling.ts` aliases them.
 */
import { pathToFileURL } from 'node:url';
import type { Playbook } from '../contract.ts';
import { readDeclarativePlaybook } from '../declarative/read.ts';
import type { DeclarativePlaybook } from '../declarative/schema.ts';
import { PlaybookFileError } from '../errors.ts';
import { createPlaybookRegistry, type PlaybookEntry, type PlaybookRegistry } from '../registry.ts';
import { findPlaybookFiles, type PlaybookFile } from './find.ts';
import { displayPath } from './paths.ts';

/** One playbook loaded, and what the bundle's registry module needs to load it the same way. */
export type LoadedPlaybook = PlaybookEntry &
  ({ kind: 'module'; file: string } | { kind: 'declarative'; file: string; spec: DeclarativePlaybook });

/** The playbooks of a set of folders. */
export interface LoadedPlaybooks {
  registry: PlaybookRegistry;
  playbooks: LoadedPlaybook[];
  /** The folders they were found in. */
  dirs: string[];
}

/** A TypeScript playbook module, imported: its default export (checked by the registry, not here). */
export async function loadModule(found: PlaybookFile): Promise<LoadedPlaybook> {
  const source = displayPath(found.file);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(found.file).href)) as { default?: unknown };
  } catch (err) {
    if (err instanceof PlaybookFileError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new PlaybookFileError(source, [`does not load: ${message.split('\n')[0]}`], { cause: err });
  }
  if (mod.default === undefined)
    throw new PlaybookFileError(source, [
      'has no default export: end it with `export default definePlaybook({ ... })`',
    ]);
  return { kind: 'module', file: found.file, source, playbook: mod.default as Playbook };
}

async function loadDeclarative(found: PlaybookFile): Promise<LoadedPlaybook> {
  const source = displayPath(found.file);
  const { spec, playbook } = await readDeclarativePlaybook(found.file, source);
  return { kind: 'declarative', file: found.file, source, spec, playbook };
}

/**
 * Finds and loads every playbook in `dirs` (see `playbookDirs` for the usual set).
 *
 * @throws PlaybookDirectoryError, PlaybookFileError or DuplicatePlaybookError, each naming the file
 * @example
 * const { registry } = await loadPlaybooks(playbookDirs(['/home/me/my-playbooks']));
 */
export async function loadPlaybooks(dirs: readonly string[]): Promise<LoadedPlaybooks> {
  const files = await findPlaybookFiles(dirs);
  const playbooks: LoadedPlaybook[] = [];
  for (const found of files) {
    playbooks.push(found.kind === 'module' ? await loadModule(found) : await loadDeclarative(found));
  }
  // The registry checks each (as definePlaybook does) and refuses two with one id.
  const registry = createPlaybookRegistry(playbooks);
  return { registry, playbooks, dirs: [...dirs] };
}
