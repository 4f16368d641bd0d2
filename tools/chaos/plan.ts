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
import {
  checkoutInputs,
  contactInputs,
  crmAddressInputs,
  handoffInputs,
  recordsAgentInputs,
  SHOP_ACCOUNTS,
  syncInputs,
} from './inputs.ts';
import type { Prng } from './prng.ts';
import { customerIdsOf, recordsOf } from './records.ts';
import { FULL_CONTRACT, type SiteCapabilities, type SiteName } from './sites.ts';

/**
 * The playbooks the suite ran by default before it could run any playbook: their writes are
 * found in the sites' records under their idempotency key, and checked in content (`verify.ts`).
 */
export const DEMO_PLAYBOOKS: readonly string[] = ['checkout@1', 'crm-billing-sync@1'];

/**
 * The playbooks the suite knows (all of the repository's `playbooks/`): inputs drawn per job on
 * records of their own (`inputs.ts`, `records.ts`), their demo accounts, their writes counted by
 * key or on their own records.
 */
export const KNOWN_PLAYBOOKS: readonly string[] = [
  'checkout@1',
  'crm-billing-sync@1',
  'invoice-handoff@1',
  'crm-address@1',
  'crm-contact-agent@1',
  'crm-contact-decl@1',
  'crm-records-agent@1',
];

/** One write step of a job. */
export interface JobWrite {
  site: SiteName;
  step: string;
  /** Belay's idempotency key of the step (`idempotencyKeyOf`, known once the job is created: `keyed` fills it in). */
  key: string;
  /**
   * How its committed writes are counted: `site`, from the site's records (`GET /__admin/writes`,
   * as the job's `counting` says); `probe`, on a site without that endpoint (a real
   * application), by what the step's probe finds by the job's key (`ledger.ts`).
   */
  countedBy: 'site' | 'probe';
}

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
   * What must not be worked on by two jobs at once (`records.ts`): the records the job changes
   * or looks up (a customer), the shop account whose cart it fills; for a playbook the suite
   * does not know, its accounts (whose state its jobs share), or its write sites when its writes
   * are counted by site.
   */
  resources: string[];
  sites: SiteName[];
  /**
   * How the job's committed writes are found in the sites' records: `key`, under each write
   * step's idempotency key (the playbook sends it); `records`, every write its write sites commit
   * on its own records (`scope`) while it runs; `site`, every write its write sites commit while
   * it runs (`attribution.ts`): the job holds those sites alone.
   */
  counting: 'key' | 'records' | 'site';
  /** `records`: a site item is the job's when its `field` is one of `values` (the customers it works on). */
  scope?: { field: string; values: string[] };
  /** The job's write steps: exactly one side effect each, unless already satisfied. */
  writes: JobWrite[];
  faults: PlannedFault[];
  /** The playbook's steps. */
  steps: StepInfo[];
}

/** What a run is made of besides the seed (every field has a default). */
export interface PlanOptions {
  /** Playbooks the jobs take in turn (default: every playbook in the repository's `playbooks/`). */
  playbooks?: readonly string[];
  /**
   * Inputs per playbook, which its jobs take in turn. Default: drawn per job for a playbook the
   * suite knows (`inputs.ts`, on records of its own: `records.ts`); for another, its
   * `exampleInputs` with its first free-text input marked with the job's id, so that no two jobs
   * ask for the same change (a probe that reads the application's state could not tell the second
   * job's write from the first's).
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

/** What a job's playbook decides: its inputs, how its writes are counted, and its records. */
type Made = Pick<JobSpec, 'counting' | 'scope'> & { inputs: unknown; resources?: string[] };

/**
 * Inputs and counting of the `n`th job of a playbook the suite knows (`given`: inputs the run
 * was given for it), or undefined for another playbook.
 */
function knownJob(prng: Prng, playbook: string, n: number, jobId: string, given: unknown): Made | undefined {
  const byCustomer = (inputs: unknown): Made => ({
    inputs,
    counting: 'records',
    scope: { field: 'customerId', values: customerIdsOf(playbook, inputs) },
  });
  switch (playbook) {
    case 'checkout@1':
      return { inputs: given ?? checkoutInputs(prng), counting: 'key' };
    case 'crm-billing-sync@1':
      return { inputs: given ?? syncInputs(prng), counting: 'key' };
    case 'invoice-handoff@1':
      return { inputs: given ?? handoffInputs(n), counting: 'key' };
    // Declarative, and it sends the step's key in the CRM form's reference field.
    case 'crm-address@1':
      return { inputs: given ?? crmAddressInputs(prng, n), counting: 'key' };
    // The agent submits the CRM's form with the page's own key: counted on the job's customers.
    case 'crm-contact-agent@1':
    case 'crm-contact-decl@1':
      return byCustomer(given ?? contactInputs(prng, playbook, n, jobId));
    case 'crm-records-agent@1':
      return byCustomer(given ?? recordsAgentInputs(prng, n, jobId));
    default:
      return undefined;
  }
}

/** Builds the jobs of a run and deals the faults among them. */
export function planRun(
  prng: Prng,
  runs: number,
  seed: number,
  catalog: PlaybookCatalog,
  options: PlanOptions = {},
): Plan {
  const playbooks = options.playbooks ?? catalog.shipped();
  const given = options.accounts ?? {};
  const sites = options.sites ?? {};
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
    const writes: JobWrite[] = steps
      .filter((s) => s.kind === 'write')
      .map((s) => ({
        site: s.app,
        step: s.id,
        key: '',
        countedBy: (sites[s.app] ?? FULL_CONTRACT).records ? 'site' : 'probe',
      }));
    const accounts = Object.fromEntries(apps.map((app) => [app, accountOf(app, n, playbook)]));
    let made = knownJob(prng, playbook, n, jobId, givenInputs);
    if (!made) {
      if (givenInputs === undefined && info.exampleInputs === undefined)
        throw new PlanError(`${playbook} has no exampleInputs: give --inputs ${playbook}=<file.json>`);
      // Counted by site, it holds the sites it writes to; else its accounts, whose state its jobs share.
      const held = [...new Set(writes.filter((w) => w.countedBy === 'site').map((w) => w.site))];
      made = {
        inputs: givenInputs ?? info.marked(info.exampleInputs, jobId),
        counting: 'site',
        resources: held.length
          ? [`site:${held.join('+')}`]
          : Object.entries(accounts).map(([app, id]) => `account:${app}:${id}`),
      };
    }
    const { inputs, counting, scope } = made;
    jobs.push({
      index: i,
      jobId,
      playbook,
      body: {
        jobId,
        playbook,
        inputs,
        accounts,
        ...(steps.some((s) => s.agent) ? { model: 'local' as const } : {}),
      },
      resources: made.resources ?? recordsOf(playbook, inputs, accounts) ?? [`job:${jobId}`],
      sites: apps,
      counting,
      ...(scope ? { scope } : {}),
      writes,
      faults: [],
      steps,
    });
  }
  const unplanned = dealFaults(prng, jobs, faultsPerKind(runs), sites);
  return { jobs, unplanned };
}
