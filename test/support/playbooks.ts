/**
 * Playbooks for tests: a registry of the ones a test names, and the repository's own as the
 * local stack finds them (no test pins which playbooks ship).
 */

import type { Playbook } from '../../lambdas/lib/playbooks/contract.ts';
import { playbookDirs } from '../../lambdas/lib/playbooks/discovery/find.ts';
import { type LoadedPlaybooks, loadPlaybooks } from '../../lambdas/lib/playbooks/discovery/load.ts';
import { createPlaybookRegistry, type PlaybookRegistry } from '../../lambdas/lib/playbooks/registry.ts';

/** A registry of exactly these playbooks. */
export function registryOf(...playbooks: Playbook[]): PlaybookRegistry {
  return createPlaybookRegistry(playbooks.map((playbook) => ({ playbook, source: `test:${playbook.id}` })));
}

let repo: Promise<LoadedPlaybooks> | undefined;

/** The repository's playbooks (`playbooks/`), loaded as `npm start` loads them. */
export function repoPlaybooks(): Promise<LoadedPlaybooks> {
  repo ??= loadPlaybooks(playbookDirs([], {}));
  return repo;
}
