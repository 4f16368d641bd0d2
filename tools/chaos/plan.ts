/**
 * The chaos plan: which jobs run (playbook, accounts, inputs, how their writes are counted) and
 * which faults hit them where, all drawn from one seeded PRNG, so a seed names a run. Any
 * playbook the folders hold can run; its faults are planned only where they can land
 * (`faults.ts`): worker kills, a browser kill and a stack kill on any playbook, a kill in the
 * middle of an action only at a step with such a point (`catalog.ts`), and a sign-in expiry, a
 * dropped response or a layout change only on a site that answers that part of the demo sites'
 * admin contract (`sites.ts`).
 */
import { idempotencyKeyOf } from '../../lambdas/lib/engine/job-identity.ts';
import { DEMO_CONNECTED } from '../../local/seed.ts';
import type { PlaybookCatalog, StepInfo } from './catalog.ts';
import { dealFaults, type FaultKind, faultsPerKind, type PlannedFault } from './faults.ts';
import { checkoutInputs, SHOP_ACCOUNTS, syncInputs } from './inputs.ts';
import type { Prng } from './prng.ts';
import type { SiteCapabilities, SiteName } from './sites.ts';

/**
 * The demo playbooks: a run's default, with inputs drawn per job (`inputs.ts`), the site's
 * records of their writes found by their idempotency key, and checked in content (`verify.ts`).
 */
export const DEMO_PLAYBOOKS: readonly string[] = ['checkout@1', 'crm-billing-sync@1'];

/** One job of the run. */
export interface JobSpec {
  index: number;
  jobId: string;
  playbook: string;
  /** The body of `POST /jobs`. */
  body: {
    jobId: string;
    playbook: string;
    inputs: unknown;
    accounts: Record<string, string>;
    approvals?: string[];
    /** The model of its agent steps: the offline local policy. */
    model?: 'local';
  };
  /**
   * What must not run twice at once: the shop account (its cart), the customer, or, for a job
   * whose writes are counted by site, its write sites.
   */
  resource: string;
  sites: SiteName[];
  /**
   * How the job's committed writes are found in the sites' records: `key`, under each write
   * step's idempotency key (the demo playbooks send it); `site`, every write its write sites
   * commit while it runs (`attribution.ts`): the job holds those sites alone.
   */
  counting: 'key' | 'site';
  /**
   * The job's write steps: exactly one side effect each; `key` is the step's idempotency key
   * (`idempotencyKeyOf`, known once the job is created: `keyed` fills it in).
   */
  writes: { site: SiteName; step: string; key: string }[];
  faults: PlannedFault[];
  /** The playbook's steps. */
  steps: StepInfo[];
}

/** What a run is made of besides the seed (every field has a default). */
export interface PlanOptions {
  /** Playbooks the jobs take in turn (default: the demo playbooks). */
  playbooks?: readonly string[];
  /**
   * Inputs per playbook, which its jobs take in turn. Default: drawn per job for the demo
   * playbooks; for another, its `exampleInputs` with its first free-text input marked with the
   * job's id, so that no two jobs ask for the same change (a probe that reads the application's
   * state could not tell the second job's write from the first's).
   */
  inputs?: Readonly<Record<string, readonly unknown[]>>;
  /** Accounts per application, which jobs take in turn (default: the demo tenant's connected one). */
  accounts?: Readonly<Record<string, readonly string[]>>;
  /** What each application's site takes (default: the whole admin contract). */
  sites?: Readonly<Record<SiteName, SiteCapabilities>>;
}

/** The jobs of a run, and the faults no job could take (by kind). */
export interface Plan {
  jobs: JobSpec[];
  unplanned: Partial<Record<FaultKind, number>>;
}

/** The plan could not be made from its options (a playbook without inputs, an application without an account). */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanError';
  }
}

/** Fills in the idempotency keys of a job's writes, from the job as created (its tenant, id and incarnation). */
export function keyed(spec: JobSpec, tenantId: string, createdAt: string): void {
  for (const w of spec.writes) w.key = idempotencyKeyOf({ tenantId, jobId: spec.jobId, createdAt }, w.step);
}

/** The demo tenant's connected account for `app` (the first, which needs no person to sign in). */
export function demoAccount(app: string): string | undefined {
  return DEMO_CONNECTED.find((a) => a.application === app)?.accountId;
}

/** Builds the jobs of a run and deals the faults among them. */
export function planRun(
  prng: Prng,
  runs: number,
  seed: number,
  catalog: PlaybookCatalog,
  options: PlanOptions = {},
): Plan {
  const playbooks = options.playbooks ?? DEMO_PLAYBOOKS;
  const given = options.accounts ?? {};
  // The accounts with a second factor come first, so even a short run signs in with TOTP and by SMS code.
  const shop: readonly string[] =
    given.shop ??
    (playbooks.includes('checkout@1') ? [...prng.shuffle(SHOP_ACCOUNTS.slice(1)), SHOP_ACCOUNTS[0]] : []);
  const accountOf = (app: string, n: number, playbook: string): string => {
    const list = app === 'shop' ? shop : given[app];
    const account = list?.length ? list[n % list.length] : demoAccount(app);
    if (!account)
      throw new PlanError(
        `${playbook} works on ${app}, for which the demo tenant has no account: give --account ${app}=<accountId>`,
      );
    return account;
  };
  const jobs: JobSpec[] = [];
  const ordinal = new Map<string, number>();
  for (let i = 0; i < runs; i++) {
    // In turn from a random start, so every playbook runs (and about as often as the others).
    const playbook = playbooks[(i + seed) % playbooks.length] as string;
    const n = ordinal.get(playbook) ?? 0;
    ordinal.set(playbook, n + 1);
    const jobId = `chaos-s${seed}-${String(i + 1).padStart(2, '0')}`;
    const info = catalog.playbook(playbook);
    const steps = info.steps;
    const listed = options.inputs?.[playbook];
    const givenInputs = listed?.length ? listed[n % listed.length] : undefined;
    const apps = [...new Set(steps.map((s) => s.app))];
    const writes = steps.filter((s) => s.kind === 'write').map((s) => ({ site: s.app, step: s.id, key: '' }));
    const job = { index: i, jobId, playbook, writes, faults: [], steps, sites: apps };
    if (playbook === 'checkout@1') {
      const account = accountOf('shop', n, playbook);
      const inputs = givenInputs ?? checkoutInputs(prng);
      jobs.push({
        ...job,
        body: { jobId, playbook, inputs, accounts: { shop: account } },
        resource: `shop:${account}`,
        counting: 'key',
      });
    } else if (playbook === 'crm-billing-sync@1') {
      const inputs = givenInputs ?? syncInputs(prng);
      const accounts = { crm: accountOf('crm', n, playbook), billing: accountOf('billing', n, playbook) };
      const email = (inputs as { customerEmail?: string }).customerEmail;
      jobs.push({
        ...job,
        body: { jobId, playbook, inputs, accounts },
        resource: `customer:${email}`,
        counting: 'key',
      });
    } else if (playbook === 'invoice-handoff@1') {
      const inputs = givenInputs ?? info.exampleInputs;
      const accounts = { billing: accountOf('billing', n, playbook), crm: accountOf('crm', n, playbook) };
      // Both sites held: every invoice download billing serves meanwhile is this job's.
      jobs.push({
        ...job,
        body: { jobId, playbook, inputs, accounts },
        resource: 'site:billing+crm',
        counting: 'key',
      });
    } else {
      if (givenInputs === undefined && info.exampleInputs === undefined)
        throw new PlanError(`${playbook} has no exampleInputs: give --inputs ${playbook}=<file.json>`);
      const inputs = givenInputs ?? info.marked(info.exampleInputs, jobId);
      const accounts = Object.fromEntries(apps.map((app) => [app, accountOf(app, n, playbook)]));
      const held = [...new Set(writes.map((w) => w.site))];
      jobs.push({
        ...job,
        body: {
          jobId,
          playbook,
          inputs,
          accounts,
          ...(steps.some((s) => s.agent) ? { model: 'local' as const } : {}),
        },
        resource: held.length ? `site:${held.join('+')}` : `job:${jobId}`,
        counting: 'site',
      });
    }
  }
  const unplanned = dealFaults(prng, jobs, faultsPerKind(runs), options.sites ?? {});
  return { jobs, unplanned };
}
