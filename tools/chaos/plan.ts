/**
 * The chaos plan: which jobs run (playbook, accounts, inputs) and which faults hit them where,
 * all drawn from one seeded PRNG, so a seed names a run. Any playbook the folders hold can run;
 * its faults are planned only where they can land: worker kills, a browser kill and a stack kill
 * on any playbook, a kill in the middle of an action only at a step with such a point
 * (`catalog.ts`), and a sign-in expiry, a dropped response or a layout change only on a site that
 * answers that part of the demo sites' admin contract (`sites.ts`).
 */
import { idempotencyKeyOf } from '../../lambdas/lib/engine/job-identity.ts';
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import { DEMO_CONNECTED } from '../../local/seed.ts';
import type { PlaybookCatalog, StepInfo } from './catalog.ts';
import { checkoutInputs, SHOP_ACCOUNTS, syncInputs } from './inputs.ts';
import type { Prng } from './prng.ts';
import { FULL_CONTRACT, type SiteCapabilities } from './sites.ts';

/** Every kind of fault the suite injects. */
export const FAULT_KINDS = [
  'worker-kill:before-action',
  'worker-kill:mid-action',
  'worker-kill:after-action',
  'worker-kill:during-checkpoint',
  'browser-kill',
  'sign-in-expiry',
  'drop-write-response',
  'drop-write-no-byte',
  'layout-change',
  'stack-kill',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A target application's site, by the application's name (`shop`, `crm`, ...). */
export type SiteName = string;

/**
 * The demo playbooks: a run's default, with inputs drawn per job (`inputs.ts`), the site's
 * records of their writes found by their idempotency key, and checked in content (`verify.ts`).
 */
export const DEMO_PLAYBOOKS: readonly string[] = ['checkout@1', 'crm-billing-sync@1'];

/** A fault of one job. `stepIndex` is where it lands (for moments: when that step's action begins). */
export type PlannedFault =
  | {
      kind: Extract<FaultKind, `worker-kill:${string}`>;
      point: FaultPoint;
      stepIndex: number;
      step: string;
      /** An agent step's action whose `action-recorded` point the kill waits for. */
      action?: number;
    }
  | {
      kind: 'browser-kill' | 'sign-in-expiry' | 'stack-kill';
      stepIndex: number;
      step: string;
      site: SiteName;
      /** `action`: while the step acts; `checkpoint`: as its completion is written (after the last step: before Finish). */
      moment: 'action' | 'checkpoint';
    }
  /** The site commits the job's write at `step` and drops the response (a status line, then the connection closes). */
  | { kind: 'drop-write-response'; stepIndex: number; step: string; site: SiteName }
  /**
   * The site commits the job's write at `step`, then resets or closes the connection without
   * a byte: the browser may send the write again by itself (a second record on a site that
   * de-duplicates nothing).
   */
  | { kind: 'drop-write-no-byte'; stepIndex: number; step: string; site: SiteName; mode: 'reset' | 'close' }
  /** The site's layout switches while the job waits for approval at `step`. */
  | { kind: 'layout-change'; stepIndex: number; step: string; site: SiteName };

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

const SITE_EXCLUSIVE: ReadonlySet<FaultKind> = new Set([
  'drop-write-response',
  'drop-write-no-byte',
  'layout-change',
]);

/**
 * How many of each fault kind a run of `runs` jobs plans: at least one; six for 30 jobs, so
 * that five land even when another fault takes a planned moment away (a worker kill planned
 * after an action that a stack restart already interrupted is never reached).
 */
export function faultsPerKind(runs: number): number {
  return Math.max(1, Math.ceil(runs / 5));
}

/** Fills in the idempotency keys of a job's writes, from the job as created (its tenant, id and incarnation). */
export function keyed(spec: JobSpec, tenantId: string, createdAt: string): void {
  for (const w of spec.writes) w.key = idempotencyKeyOf({ tenantId, jobId: spec.jobId, createdAt }, w.step);
}

/** The demo tenant's connected account for `app` (the first, which needs no person to sign in). */
export function demoAccount(app: string): string | undefined {
  return DEMO_CONNECTED.find((a) => a.application === app)?.accountId;
}

/** The fault kinds that need a part of the contract the site does not answer. */
export function faultsSiteCannotTake(caps: SiteCapabilities): FaultKind[] {
  return [
    ...(caps.sessions ? [] : (['sign-in-expiry'] as const)),
    ...(caps.faults ? [] : (['drop-write-response', 'drop-write-no-byte', 'layout-change'] as const)),
  ];
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

function dealFaults(
  prng: Prng,
  jobs: JobSpec[],
  perKind: number,
  sites: Readonly<Record<SiteName, SiteCapabilities>>,
): Partial<Record<FaultKind, number>> {
  const unplanned: Partial<Record<FaultKind, number>> = {};
  const deck = prng.shuffle(FAULT_KINDS.flatMap((kind) => Array.from({ length: perKind }, () => kind)));
  for (const kind of deck) {
    const able = jobs.filter((j) => landings(j, kind, sites).length > 0);
    // A kind once per job (a second layout change would wait for an approval that never comes),
    // and one site-wide fault per job where the run allows.
    const fresh = able.filter((j) => !j.faults.some((f) => f.kind === kind));
    if (fresh.length === 0) {
      unplanned[kind] = (unplanned[kind] ?? 0) + 1;
      continue;
    }
    const fits = fresh.filter(
      (j) => !(SITE_EXCLUSIVE.has(kind) && j.faults.some((f) => SITE_EXCLUSIVE.has(f.kind))),
    );
    const pool = fits.length ? fits : fresh;
    const fewest = Math.min(...pool.map((j) => j.faults.length));
    const job = prng.pick(pool.filter((j) => j.faults.length === fewest));
    const fault = concretize(prng, job, kind, landings(job, kind, sites));
    job.faults.push(fault);
    if (fault.kind === 'layout-change') {
      const steps = job.steps;
      if (!steps[fault.stepIndex]?.needsApproval)
        job.body.approvals = [...(job.body.approvals ?? []), fault.step];
    }
  }
  return unplanned;
}

/**
 * The first step at which the job has a signed-in session: the one after its last sign-in step
 * before its first write (the step after the first, when it signs in nowhere there).
 */
function firstSignedIn(steps: readonly StepInfo[]): number {
  const firstWrite = steps.findIndex((s) => s.kind === 'write');
  const lead = firstWrite === -1 ? steps : steps.slice(0, firstWrite);
  const lastSignIn = lead.map((s) => s.signIn).lastIndexOf(true);
  return Math.min(lastSignIn + 1 || 1, steps.length - 1);
}

/** The steps where a fault of `kind` can land in the job, as its faults stand. */
function landings(
  job: JobSpec,
  kind: FaultKind,
  sites: Readonly<Record<SiteName, SiteCapabilities>>,
): number[] {
  const steps = job.steps;
  const caps = (i: number): SiteCapabilities => sites[steps[i]?.app ?? ''] ?? FULL_CONTRACT;
  const all = steps.map((_, i) => i);
  const writes = all.filter((i) => steps[i]?.kind === 'write');
  const signedIn = all.slice(firstSignedIn(steps));
  const inputs = (job.body.inputs ?? {}) as Record<string, unknown>;
  const dropped = job.faults.filter((f) => isDrop(f.kind)).map((f) => f.stepIndex);
  switch (kind) {
    case 'worker-kill:before-action':
    case 'worker-kill:after-action':
    case 'worker-kill:during-checkpoint':
      // Not the write whose response the site drops: Reconcile, not RunStep, completes that one.
      return all.filter((i) => !dropped.includes(i));
    case 'worker-kill:mid-action':
      return all.filter((i) => {
        const mid = steps[i]?.midAction;
        return (
          mid !== undefined && (mid.point !== 'mid-action' || !mid.onlyWith || Boolean(inputs[mid.onlyWith]))
        );
      });
    case 'browser-kill':
    case 'stack-kill':
      // Not the first steps: a session must exist for the job (and be signed in).
      return signedIn;
    case 'sign-in-expiry':
      return signedIn.filter((i) => caps(i).sessions);
    case 'drop-write-response':
    case 'drop-write-no-byte':
      return writes.filter((i) => caps(i).faults);
    case 'layout-change':
      // After the sign-in steps, so the switch meets a signed-in page; never an agent step,
      // which looks at no fixed layout (its model reads the page as it is: there is no
      // "stop at a changed page" to check).
      return signedIn.filter((i) => !steps[i]?.agent && caps(i).faults);
  }
}

function concretize(prng: Prng, job: JobSpec, kind: FaultKind, candidates: number[]): PlannedFault {
  const steps = job.steps;
  const at = (i: number): { stepIndex: number; step: string; site: SiteName } => ({
    stepIndex: i,
    step: steps[i]?.id ?? '',
    site: steps[i]?.app ?? 'shop',
  });
  const writes = candidates.filter((i) => steps[i]?.kind === 'write');
  const killedAfter = job.faults
    .filter((f) => f.kind === 'worker-kill:after-action' || f.kind === 'worker-kill:during-checkpoint')
    .map((f) => f.stepIndex);
  // Half of the worker kills land on a write step: there a repeat would be a duplicate side effect.
  const anyOrWrite = (): number =>
    writes.length && prng.chance(0.5) ? prng.pick(writes) : prng.pick(candidates);
  switch (kind) {
    case 'worker-kill:before-action':
    case 'worker-kill:after-action':
    case 'worker-kill:during-checkpoint': {
      const { stepIndex, step } = at(anyOrWrite());
      return { kind, point: kind.slice('worker-kill:'.length) as FaultPoint, stepIndex, step };
    }
    case 'worker-kill:mid-action': {
      const { stepIndex, step } = at(anyOrWrite());
      const mid = steps[stepIndex]?.midAction;
      return mid?.point === 'action-recorded'
        ? { kind, point: mid.point, stepIndex, step, action: mid.action }
        : { kind, point: 'mid-action', stepIndex, step };
    }
    case 'browser-kill':
    case 'sign-in-expiry':
    case 'stack-kill': {
      // A third land as a step's completion is written, half of those at the last step (just before Finish).
      const moment = prng.chance(1 / 3) ? 'checkpoint' : 'action';
      const index =
        moment === 'checkpoint' && prng.chance(0.5) ? (candidates.at(-1) as number) : prng.pick(candidates);
      return { kind, ...at(index), moment };
    }
    case 'drop-write-response':
    case 'drop-write-no-byte': {
      // Preferably a write no worker kill waits after (that point would never come: see above).
      const free = candidates.filter((i) => !killedAfter.includes(i));
      const where = at(prng.pick(free.length ? free : candidates));
      return kind === 'drop-write-response'
        ? { kind, ...where }
        : { kind, ...where, mode: prng.pick(['reset', 'close'] as const) };
    }
    case 'layout-change':
      return { kind, ...at(prng.pick(candidates)) };
  }
}

/** One line naming a fault and where it lands. */
export function describeFault(f: PlannedFault): string {
  const how =
    f.kind === 'drop-write-no-byte' ? `(${f.mode})` : 'action' in f && f.action ? `(action ${f.action})` : '';
  return `${f.kind}${how}@${f.step}${'moment' in f && f.moment === 'checkpoint' ? '(checkpoint)' : ''}`;
}

/** A fault that drops a committed write's response (either way). */
export function isDrop(kind: FaultKind): kind is 'drop-write-response' | 'drop-write-no-byte' {
  return kind === 'drop-write-response' || kind === 'drop-write-no-byte';
}
