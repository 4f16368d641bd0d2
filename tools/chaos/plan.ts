/**
 * The chaos plan: which jobs run (playbook, account or customer, inputs) and which faults hit
 * them where, all drawn from one seeded PRNG, so a seed names a run.
 */
import { idempotencyKeyOf } from '../../lambdas/lib/engine/job-identity.ts';
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import type { PlaybookCatalog, StepInfo } from './catalog.ts';
import { checkoutInputs, SHOP_ACCOUNTS, syncInputs } from './inputs.ts';
import type { Prng } from './prng.ts';

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

export type SiteName = 'shop' | 'crm' | 'billing';
export type PlaybookId = 'checkout@1' | 'crm-billing-sync@1';

/** A fault of one job. `stepIndex` is where it lands (for moments: when that step's action begins). */
export type PlannedFault =
  | { kind: Extract<FaultKind, `worker-kill:${string}`>; point: FaultPoint; stepIndex: number; step: string }
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
  playbook: PlaybookId;
  /** The body of `POST /jobs`. */
  body: {
    jobId: string;
    playbook: PlaybookId;
    inputs: unknown;
    accounts: Record<string, string>;
    approvals?: string[];
  };
  /** What must not run twice at once: the shop account (its cart) or the customer. */
  resource: string;
  sites: SiteName[];
  /**
   * The job's write steps: exactly one side effect each, under the step's idempotency key
   * (`idempotencyKeyOf`, known once the job is created: `keyed` fills it in).
   */
  writes: { site: SiteName; step: string; key: string }[];
  faults: PlannedFault[];
  /** The playbook's steps. */
  steps: StepInfo[];
}

/** Steps that report a `mid-action` point in RunStep (see the playbooks' `ctx.faultPoint`). */
const MID_ACTION_STEPS = new Set([
  'search',
  'add-item-a',
  'add-item-b',
  'set-quantity',
  'shipping-address',
  'shipping-method',
  'apply-promo',
  'payment-details',
  'place-order',
  'update-crm-customer',
  'update-billing-address',
]);

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

/** Builds the jobs of a run and deals the faults among them. */
export function planRun(prng: Prng, runs: number, seed: number, catalog: PlaybookCatalog): JobSpec[] {
  // The accounts with a second factor come first, so even a short run signs in with TOTP and by SMS code.
  const accounts = [...prng.shuffle(SHOP_ACCOUNTS.slice(1)), SHOP_ACCOUNTS[0]];
  const jobs: JobSpec[] = [];
  let checkouts = 0;
  for (let i = 0; i < runs; i++) {
    // Alternate from a random start, so both playbooks always run (and about half each).
    const playbook: PlaybookId = (i + (seed & 1)) % 2 === 0 ? 'checkout@1' : 'crm-billing-sync@1';
    const jobId = `chaos-s${seed}-${String(i + 1).padStart(2, '0')}`;
    if (playbook === 'checkout@1') {
      const account = accounts[checkouts++ % accounts.length] as string;
      jobs.push({
        index: i,
        jobId,
        playbook,
        body: { jobId, playbook, inputs: checkoutInputs(prng), accounts: { shop: account } },
        resource: `shop:${account}`,
        sites: ['shop'],
        writes: [{ site: 'shop', step: 'place-order', key: '' }],
        faults: [],
        steps: catalog.steps(playbook),
      });
    } else {
      const inputs = syncInputs(prng);
      jobs.push({
        index: i,
        jobId,
        playbook,
        body: { jobId, playbook, inputs, accounts: { crm: 'acct_demo_crm', billing: 'acct_demo_billing' } },
        resource: `customer:${inputs.customerEmail}`,
        sites: ['crm', 'billing'],
        writes: [
          { site: 'crm', step: 'update-crm-customer', key: '' },
          { site: 'billing', step: 'update-billing-address', key: '' },
        ],
        faults: [],
        steps: catalog.steps(playbook),
      });
    }
  }
  dealFaults(prng, jobs, faultsPerKind(runs));
  return jobs;
}

function dealFaults(prng: Prng, jobs: JobSpec[], perKind: number): void {
  const deck = prng.shuffle(FAULT_KINDS.flatMap((kind) => Array.from({ length: perKind }, () => kind)));
  for (const kind of deck) {
    const fits = jobs.filter(
      (j) =>
        !j.faults.some((f) => f.kind === kind) &&
        !(SITE_EXCLUSIVE.has(kind) && j.faults.some((f) => SITE_EXCLUSIVE.has(f.kind))),
    );
    const pool = fits.length ? fits : jobs;
    const fewest = Math.min(...pool.map((j) => j.faults.length));
    const job = prng.pick(pool.filter((j) => j.faults.length === fewest));
    const fault = concretize(prng, job, kind);
    job.faults.push(fault);
    if (fault.kind === 'layout-change') {
      const steps = job.steps;
      if (!steps[fault.stepIndex]?.needsApproval)
        job.body.approvals = [...(job.body.approvals ?? []), fault.step];
    }
  }
}

function concretize(prng: Prng, job: JobSpec, kind: FaultKind): PlannedFault {
  const steps = job.steps;
  const at = (i: number): { stepIndex: number; step: string; site: SiteName } => ({
    stepIndex: i,
    step: steps[i]?.id ?? '',
    site: (steps[i]?.app ?? 'shop') as SiteName,
  });
  const all = steps.map((_, i) => i);
  const writes = all.filter((i) => steps[i]?.kind === 'write');
  const inputs = job.body.inputs as { promoCode?: string };
  const dropped = job.faults.filter((f) => isDrop(f.kind)).map((f) => f.stepIndex);
  const killedAfter = job.faults
    .filter((f) => f.kind === 'worker-kill:after-action' || f.kind === 'worker-kill:during-checkpoint')
    .map((f) => f.stepIndex);
  // Half of the worker kills land on a write step: there a repeat would be a duplicate side effect.
  const anyOrWrite = (candidates: number[]): number => {
    const w = candidates.filter((i) => writes.includes(i));
    return w.length && prng.chance(0.5) ? prng.pick(w) : prng.pick(candidates);
  };
  switch (kind) {
    case 'worker-kill:before-action':
    case 'worker-kill:after-action':
    case 'worker-kill:during-checkpoint': {
      // Not the write whose response the site drops: Reconcile, not RunStep, completes that one.
      const { stepIndex, step } = at(anyOrWrite(all.filter((i) => !dropped.includes(i))));
      return { kind, point: kind.slice('worker-kill:'.length) as FaultPoint, stepIndex, step };
    }
    case 'worker-kill:mid-action': {
      const mid = all.filter(
        (i) =>
          MID_ACTION_STEPS.has(steps[i]?.id ?? '') && (steps[i]?.id !== 'apply-promo' || inputs.promoCode),
      );
      const { stepIndex, step } = at(anyOrWrite(mid));
      return { kind, point: 'mid-action', stepIndex, step };
    }
    case 'browser-kill':
    case 'sign-in-expiry':
    case 'stack-kill': {
      // Not the first steps: a session must exist for the job (and be signed in). A third land
      // as a step's completion is written, half of those at the last step (just before Finish).
      const moment = prng.chance(1 / 3) ? 'checkpoint' : 'action';
      const last = steps.length - 1;
      const index = moment === 'checkpoint' && prng.chance(0.5) ? last : prng.int(2, last);
      return { kind, ...at(index), moment };
    }
    case 'drop-write-response':
    case 'drop-write-no-byte': {
      // Preferably a write no worker kill waits after (that point would never come: see above).
      const free = writes.filter((i) => !killedAfter.includes(i));
      const where = at(prng.pick(free.length ? free : writes));
      return kind === 'drop-write-response'
        ? { kind, ...where }
        : { kind, ...where, mode: prng.pick(['reset', 'close'] as const) };
    }
    case 'layout-change':
      // After the sign-in steps, so the switch meets a signed-in page.
      return { kind, ...at(prng.int(2, steps.length - 1)) };
  }
}

/** One line naming a fault and where it lands. */
export function describeFault(f: PlannedFault): string {
  const how = f.kind === 'drop-write-no-byte' ? `(${f.mode})` : '';
  return `${f.kind}${how}@${f.step}${'moment' in f && f.moment === 'checkpoint' ? '(checkpoint)' : ''}`;
}

/** A fault that drops a committed write's response (either way). */
export function isDrop(kind: FaultKind): kind is 'drop-write-response' | 'drop-write-no-byte' {
  return kind === 'drop-write-response' || kind === 'drop-write-no-byte';
}
