/**
 * Before a chaos run's jobs: the playbooks it runs (found as the stack finds them, with its
 * options checked against them before anything starts), what each of their sites takes of the
 * demo sites' admin contract, and the accounts the jobs act as.
 */
import { resolve } from 'node:path';
import { configuredApplications } from '../../lambdas/lib/engine/applications.ts';
import { playbookDirs, REPO_PLAYBOOKS_DIR } from '../../lambdas/lib/playbooks/discovery/find.ts';
import { loadPlaybooks } from '../../lambdas/lib/playbooks/discovery/load.ts';
import { registerSdkResolution } from '../../lambdas/lib/playbooks/discovery/register.ts';
import { type AccountOption, accountsByApp, OptionError } from '../playbook/options.ts';
import { catalogOf, type PlaybookCatalog } from './catalog.ts';
import { faultsSiteCannotTake } from './faults.ts';
import { usernameOf } from './inputs.ts';
import { demoAccount, KNOWN_PLAYBOOKS } from './plan.ts';
import { type SiteCapabilities, type SiteName, siteCapabilities } from './sites.ts';
import type { StackHandle } from './stack-process.ts';

/** What a run is given besides its seed and pace (`npm run chaos -- --playbook ...`). */
export interface RunSelection {
  /** Playbook ids (default: every playbook of the repository's `playbooks/` folder). */
  playbooks?: readonly string[];
  /** Playbook folders besides `playbooks/` (as `npm start -- --playbooks`). */
  playbookDirs?: readonly string[];
  /** Target applications over the demo sites, as JSON (as `npm start -- --applications`). */
  applications?: string;
  /** Inputs per playbook id: one inputs object, or a list its jobs take in turn. */
  inputs?: Readonly<Record<string, unknown>>;
  /** `--account` options. */
  accounts?: readonly AccountOption[];
}

/** The run's playbooks, checked. */
export interface RunPlaybooks {
  catalog: PlaybookCatalog;
  playbooks: string[];
  inputs: Record<string, unknown[]>;
  /** `npm start` options for every boot of the stack. */
  stackArgs: string[];
}

/**
 * Loads the playbooks and checks the selection against them, before the stack starts.
 * @throws OptionError naming the option of the first problem
 */
export async function loadRunPlaybooks(selection: RunSelection): Promise<RunPlaybooks> {
  // The stack runs from the repository's root: folders are passed to it absolute.
  const extra = (selection.playbookDirs ?? []).map((d) => resolve(d));
  const dirs = playbookDirs(extra);
  if (dirs.some((d) => d !== REPO_PLAYBOOKS_DIR)) registerSdkResolution();
  let catalog: PlaybookCatalog;
  try {
    catalog = catalogOf(await loadPlaybooks(dirs));
  } catch (err) {
    throw new OptionError('--playbooks', (err as Error).message, { cause: err });
  }
  const playbooks = selection.playbooks?.length ? [...new Set(selection.playbooks)] : catalog.shipped();
  for (const id of playbooks)
    if (!catalog.has(id))
      throw new OptionError(
        '--playbook',
        `${id} is in none of the playbook folders (${catalog.ids().join(', ')})`,
      );

  const inputs: Record<string, unknown[]> = {};
  for (const [id, value] of Object.entries(selection.inputs ?? {})) {
    if (!playbooks.includes(id))
      throw new OptionError('--inputs', `${id} is not a playbook of the run (--playbook)`);
    const list = Array.isArray(value) ? value : [value];
    if (list.length === 0) throw new OptionError('--inputs', `${id}: the list of inputs is empty`);
    list.forEach((item, i) => {
      const bad = catalog.playbook(id).inputProblems(item);
      if (bad.length)
        throw new OptionError(
          '--inputs',
          `${id}${Array.isArray(value) ? ` (inputs ${i + 1})` : ''} do not fit its input schema at ${bad.join(', ')}`,
        );
    });
    inputs[id] = list;
  }
  const apps = new Set(playbooks.flatMap((id) => catalog.steps(id).map((s) => s.app)));
  const accountApps = new Set((selection.accounts ?? []).map((a) => a.app));
  for (const app of accountApps)
    if (!apps.has(app)) throw new OptionError('--account', `${app}: no playbook of the run works on it`);
  for (const id of playbooks) {
    if (KNOWN_PLAYBOOKS.includes(id)) continue;
    if (!inputs[id] && catalog.playbook(id).exampleInputs === undefined)
      throw new OptionError('--inputs', `${id} has no exampleInputs: give --inputs ${id}=<file.json>`);
    for (const app of new Set(catalog.steps(id).map((s) => s.app)))
      if (!accountApps.has(app) && !demoAccount(app))
        throw new OptionError(
          '--account',
          `${id} works on ${app}, for which the demo tenant has no account: give --account ${app}=<accountId> or ${app}=@<credentials.json>`,
        );
  }
  if (selection.applications) {
    try {
      configuredApplications(undefined, selection.applications);
    } catch (err) {
      throw new OptionError('--applications', (err as Error).message.replace(/^--applications: /, ''));
    }
  }
  const stackArgs = [
    ...extra.flatMap((d) => ['--playbooks', d]),
    ...(selection.applications ? ['--applications', selection.applications] : []),
  ];
  return { catalog, playbooks, inputs, stackArgs };
}

/**
 * Asks the site of every application the run's playbooks work on what it takes, and says what
 * it cannot: those faults are planned nowhere on it, and the writes of a site that lists no
 * committed writes (a real application) are counted by what each write step's probe finds by
 * the job's key.
 */
export async function runSites(
  h: StackHandle,
  run: RunPlaybooks,
  say: (line: string) => void,
): Promise<Record<SiteName, SiteCapabilities>> {
  const steps = run.playbooks.flatMap((id) => run.catalog.steps(id));
  const writeApps = new Set(steps.filter((s) => s.kind === 'write').map((s) => s.app));
  const caps: Record<SiteName, SiteCapabilities> = {};
  for (const app of new Set(steps.map((s) => s.app))) {
    if (!h.applications[app])
      throw new OptionError(
        '--applications',
        `${app}: no application of that name (the stack has ${Object.keys(h.applications).join(', ')})`,
      );
    caps[app] = await siteCapabilities(h.site(app));
    const cannot = faultsSiteCannotTake(caps[app]);
    if (cannot.length)
      say(
        `${app} (${h.applications[app]}) cannot take ${cannot.join(', ')}: it does not answer ${[
          ...(caps[app].sessions ? [] : ['POST /__admin/sessions/expire']),
          ...(caps[app].faults ? [] : ['/__admin/faults (so its de-duplication is its own)']),
        ].join(' or ')}`,
      );
    if (!caps[app].records && writeApps.has(app))
      say(
        `${app} (${h.applications[app]}) lists no committed writes (GET /__admin/writes): its writes are counted by what each write step's probe finds by the job's key (the final check's, in the job's ledger)`,
      );
  }
  return caps;
}

/** The run's accounts per application (credentials files connected now), and who each signs in as. */
export async function runAccounts(
  h: StackHandle,
  options: readonly AccountOption[],
): Promise<{ byApp: Record<string, string[]>; usernameOf: (accountId: string) => string | undefined }> {
  const { byApp, connected } = await accountsByApp(options, (app, credentials) =>
    h.api.connectAccount({ application: app, label: `${app} (chaos)`, credentials }),
  );
  return {
    byApp,
    usernameOf: (id) => connected.find((c) => c.accountId === id)?.username ?? usernameOf(id),
  };
}
