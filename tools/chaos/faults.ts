/**
 * The faults of a chaos run and where each can land: dealt among the jobs from the seeded PRNG,
 * a kind at most once per job, only at steps and on sites where it lands (see `plan.ts` for the
 * jobs, `catalog.ts` for what a step offers, `sites.ts` for what a site takes).
 */
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import type { StepInfo } from './catalog.ts';
import type { Prng } from './prng.ts';
import { FULL_CONTRACT, type SiteCapabilities, type SiteName } from './sites.ts';

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

/** What the dealer needs of a job: its steps, its faults so far, its inputs and approvals. */
export interface FaultTarget {
  steps: StepInfo[];
  faults: PlannedFault[];
  body: { inputs: unknown; approvals?: string[] };
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

/** The fault kinds that need a part of the contract the site does not answer. */
export function faultsSiteCannotTake(caps: SiteCapabilities): FaultKind[] {
  return [
    ...(caps.sessions ? [] : (['sign-in-expiry'] as const)),
    ...(caps.faults ? [] : (['drop-write-response', 'drop-write-no-byte', 'layout-change'] as const)),
  ];
}

/**
 * Deals `perKind` faults of every kind among `jobs` (adding each to its job's `faults`, and a
 * layout change's step to its approvals); answers how many of each kind no job could take.
 */
export function dealFaults(
  prng: Prng,
  jobs: FaultTarget[],
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
  job: FaultTarget,
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

function concretize(prng: Prng, job: FaultTarget, kind: FaultKind, candidates: number[]): PlannedFault {
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
