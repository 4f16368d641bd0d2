/**
 * The playbooks one deployment runs, by `name@version`. Nothing here names a playbook: the
 * registry is built from what was found in the playbook folders (`discovery/`), in the bundle
 * by the module generated at bundle time (`bundled.ts`), in a local process by `loadPlaybooks`.
 */
import type { Playbook } from './contract.ts';
import { playbookProblems } from './define.ts';
import { DuplicatePlaybookError, PlaybookFileError, UnknownPlaybookError } from './errors.ts';

/** One playbook and the file it came from (repository-relative or absolute, for messages). */
export interface PlaybookEntry {
  playbook: Playbook;
  source: string;
}

/**
 * A playbook built on first use: its id is known without building it (a declarative one's
 * `name@version`), so a handler that runs one playbook compiles only that one at cold start.
 */
export interface LazyPlaybookEntry {
  id: string;
  load(): Playbook;
  source: string;
}

/** Where the engine and the API find playbooks. */
export interface PlaybookRegistry {
  /**
   * The playbook registered as `id` (`name@version`).
   * @throws UnknownPlaybookError naming the known ids.
   */
  get(id: string): Playbook;
  /** Every registered playbook, in the order found (folders in order, files by name). */
  list(): Playbook[];
  /** The file a playbook came from, or undefined for an unknown id. */
  sourceOf(id: string): string | undefined;
}

function checked(playbook: Playbook, source: string): Playbook {
  const problems = playbookProblems(playbook);
  if (problems.length > 0) throw new PlaybookFileError(source, problems);
  return playbook;
}

/**
 * A registry of `entries`, each checked as `definePlaybook` checks (whatever its module did);
 * a lazy entry when it is first built, and its id must be what it said.
 *
 * @throws PlaybookFileError naming the file and every problem of a playbook that is not valid
 * @throws DuplicatePlaybookError naming both files when two playbooks have one id
 * @example
 * const registry = createPlaybookRegistry([{ playbook: checkout, source: 'playbooks/checkout/index.ts' }]);
 * registry.get('checkout@1').steps.length; // 14
 */
export function createPlaybookRegistry(
  entries: readonly (PlaybookEntry | LazyPlaybookEntry)[],
): PlaybookRegistry {
  const byId = new Map<string, { source: string; playbook(): Playbook }>();
  for (const entry of entries) {
    let id: string;
    let get: () => Playbook;
    if ('load' in entry) {
      id = entry.id;
      let built: Playbook | undefined;
      get = () => {
        if (built) return built;
        const playbook = checked(entry.load(), entry.source);
        if (playbook.id !== id)
          throw new PlaybookFileError(entry.source, [`registered as ${id}, but its id is ${playbook.id}`]);
        built = playbook;
        return built;
      };
    } else {
      const playbook = checked(entry.playbook, entry.source);
      id = playbook.id;
      get = () => playbook;
    }
    const earlier = byId.get(id);
    if (earlier) throw new DuplicatePlaybookError(id, [earlier.source, entry.source]);
    byId.set(id, { source: entry.source, playbook: get });
  }
  return {
    get(id) {
      const entry = byId.get(id);
      if (!entry) throw new UnknownPlaybookError(id, [...byId.keys()]);
      return entry.playbook();
    },
    list: () => [...byId.values()].map((e) => e.playbook()),
    sourceOf: (id) => byId.get(id)?.source,
  };
}

/** May `tenantId` run `playbook`? (A playbook without `tenants` is every tenant's.) */
export function tenantMayRun(playbook: Playbook, tenantId: string): boolean {
  return playbook.tenants === undefined || playbook.tenants.includes(tenantId);
}
