/**
 * `npm run playbook -- test`: the runs it makes of one playbook and what they prove, step by
 * step. Pure: the plan is a list of scenarios, the verdicts are read from each run's outcome
 * and ledger (the driver, `drive.ts`, makes the runs on the local stack).
 *
 * What is checked, per step:
 * - verify: the clean run completed the step with evidence (something the application showed);
 * - own (writes): the evidence is the job's own. Run again with the clean run's inputs (its
 *   records are there now), a write that creates must not find its check already holding before
 *   the action, unless it names the field that makes its evidence new (`newEvidence`); in every
 *   run that succeeded, the evidence names the record the final check's probe finds by the key;
 *   and two runs of a write that creates never record the same evidence;
 * - re-run (reads): killed before, in the middle of (when the step marks it) and after its
 *   action, the job still succeeds: running the read again converges;
 * - probe (writes): killed after its action (the write committed, no checkpoint), the next
 *   attempt's probe finds the effect (the step completes `reconciled`) instead of acting again;
 *   killed before it, the probe says absent and the job succeeds;
 * - drop (writes): the site commits the step's write and its answer never arrives (the
 *   application's proxy resets the connection without a byte, see `drop-proxy.ts`); the job
 *   still succeeds and the site committed exactly one write in the step (a resend by the
 *   browser, or a probe that misses the write, shows as two). Only the step's committing request
 *   counts (its `commits`, else the one the clean run's write guard recorded); the page's own
 *   requests (a heartbeat, autosave) are listed apart;
 * - restore: with the browser lost just before the step, restore rebuilds its page in a new
 *   session and the job succeeds;
 * - time: how long the step took in the clean run.
 */
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import type { Evidence, LedgerEntry } from '../../lambdas/lib/ledger/types.ts';
import type { Playbook, Step } from '../../lambdas/lib/playbooks/contract.ts';
import { effectOf } from '../../lambdas/lib/playbooks/effects.ts';

export type FaultKind =
  | 'clean'
  | 'repeat'
  | 'kill-before'
  | 'kill-mid'
  | 'kill-after'
  | 'browser-lost'
  | 'drop-response';

/** One run of the playbook: clean, or with one fault at one step. */
export interface Scenario {
  fault: FaultKind;
  /** The step the fault is at (none for the clean run). */
  stepIndex?: number;
}

/** Where each fault strikes in the engine (`RunStep`'s fault points). */
export const FAULT_POINTS: Record<Exclude<FaultKind, 'clean' | 'repeat'>, FaultPoint> = {
  'kill-before': 'before-action',
  'kill-mid': 'mid-action',
  'kill-after': 'after-action',
  'browser-lost': 'before-action',
  // Armed as the step's action begins: its first unsafe request is the write.
  'drop-response': 'before-action',
};

/** How one run ended. */
export interface RunOutcome {
  scenario: Scenario;
  status: string;
  /** Did the fault strike (a step that never calls `faultPoint('mid-action')` has no middle)? */
  struck: boolean;
  entries: LedgerEntry[];
  seconds: number;
  /** Why it did not succeed, when it did not (a review asked for, a failure reason). */
  detail?: string;
  /** `drop-response`: the writes the site committed while the step ran (its attempts and Reconcile). */
  commits?: number;
  /** `drop-response`: the committing request counted (`POST /api/notes`), when it was known. */
  commitsAs?: string;
  /** `drop-response`: the page's own unsafe requests in the step (`9 POST /api/heartbeat`). */
  background?: string;
}

export type Mark = { ok: true; note?: string } | { ok: false; note: string } | { na: string };

export interface StepVerdict {
  stepIndex: number;
  id: string;
  kind: 'read' | 'write';
  verify: Mark;
  /** Writes: the evidence is the job's own (not what held before the action, the record its probe finds). */
  own: Mark;
  /** Reads: the re-runs after each kill. */
  rerun: Mark;
  /** Writes: the probe after a kill after the action, and before it. */
  probe: Mark;
  /** Writes: one committed write when the site's answer to it is dropped. */
  drop: Mark;
  restore: Mark;
  /** The step in the clean run, in ms. */
  ms?: number;
  /** Safe to retry: every mark that applies is ok. */
  safe: boolean;
}

/**
 * Every run `playbook test` makes: clean, then each fault at each step (`only` limits the
 * steps), and last a dropped answer at each write whose application is behind a proxy
 * (`droppable`).
 */
export function planScenarios(
  playbook: Playbook,
  only?: readonly string[],
  droppable: (app: string) => boolean = () => false,
): Scenario[] {
  const plan: Scenario[] = [{ fault: 'clean' }];
  if (playbook.steps.some((s) => s.kind === 'write')) plan.push({ fault: 'repeat' });
  const faulted = playbook.steps.flatMap((step, stepIndex) =>
    only && !only.includes(step.id) ? [] : [{ step, stepIndex }],
  );
  for (const { stepIndex } of faulted)
    for (const fault of ['kill-before', 'kill-mid', 'kill-after', 'browser-lost'] as const)
      plan.push({ fault, stepIndex });
  for (const { step, stepIndex } of faulted)
    if (step.kind === 'write' && droppable(step.app)) plan.push({ fault: 'drop-response', stepIndex });
  return plan;
}

/** The scenario's name in progress lines and the table (`kill-after@place-order`). */
export function scenarioName(playbook: Playbook, s: Scenario): string {
  return s.stepIndex === undefined ? s.fault : `${s.fault}@${playbook.steps[s.stepIndex]?.id}`;
}

const completionOf = (entries: readonly LedgerEntry[], step: string): LedgerEntry | undefined =>
  entries.findLast((e) => e.type === 'step-completed' && e.step === step);

const failed = (o: RunOutcome, what: string): Mark => ({
  ok: false,
  note: `${what}: ${o.status}${o.detail ? ` (${o.detail})` : ''}`,
});

function stepMs(entries: readonly LedgerEntry[], step: string): number | undefined {
  const started = entries.find((e) => e.type === 'step-started' && e.step === step);
  const done = completionOf(entries, step);
  if (!done) return undefined;
  const from = started ?? entries[entries.indexOf(done) - 1];
  return from ? Date.parse(done.at) - Date.parse(from.at) : undefined;
}

/** Evidence fields that say how the step was completed, not what it found. */
const HOW = new Set(['reconciled', 'reviewedBy']);

function what(evidence: Evidence | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(evidence ?? {}).filter(([k]) => !HOW.has(k)));
}

/** Did the final check's probe find the step's record (by its key) in the run? */
function verifiedByProbe(entries: readonly LedgerEntry[], step: string): boolean {
  const verified = entries.findLast((e) => e.type === 'succeeded')?.detail?.verified as
    | Record<string, Evidence>
    | undefined;
  const found = verified?.[step];
  return found !== undefined && found.reviewedBy === undefined;
}

/** A field the step's evidence and the final check's probe both give, and where they differ. */
function differsFromProbe(entries: readonly LedgerEntry[], step: string): string | undefined {
  const done = completionOf(entries, step);
  const verified = entries.findLast((e) => e.type === 'succeeded')?.detail?.verified as
    | Record<string, Evidence>
    | undefined;
  const found = verified?.[step];
  if (!done?.evidence || !found) return undefined;
  const mine = what(done.evidence);
  const probed = what(found);
  return Object.keys(mine).find((k) => k in probed && JSON.stringify(mine[k]) !== JSON.stringify(probed[k]));
}

/**
 * Writes: is the step's evidence the job's own? From the repeat (the clean run's inputs again,
 * its records there): a write that creates must not find its check already holding before the
 * action unless it names a new field; in every run that succeeded, its evidence agrees with what
 * the final check's probe found by the key; and the clean run and its repeat differ.
 */
function ownMark(step: Step, runs: readonly RunOutcome[]): Mark {
  if (step.kind !== 'write') return { na: 'a read' };
  const creates = effectOf(step) === 'creates';
  const clean = runs.find((r) => r.scenario.fault === 'clean');
  const repeat = runs.find((r) => r.scenario.fault === 'repeat');
  for (const r of runs) {
    if (r.status !== 'SUCCEEDED') continue;
    const field = differsFromProbe(r.entries, step.id);
    if (field !== undefined)
      return {
        ok: false,
        note: `its evidence names another record than the one its probe finds by the key (${field}, run ${r.scenario.fault}): read it off the job's own record`,
      };
  }
  if (!repeat) return { na: 'not run' };
  if (repeat.status !== 'SUCCEEDED') return failed(repeat, 'the clean run repeated with its inputs');
  const heldBefore = repeat.entries.some(
    (e) => e.type === 'step-started' && e.step === step.id && e.detail?.heldBefore === true,
  );
  const satisfied = completionOf(repeat.entries, step.id)?.detail?.alreadySatisfied === true;
  if (!creates) return satisfied ? { ok: true, note: 'already satisfied when repeated' } : { ok: true };
  if (heldBefore && !step.newEvidence?.length)
    return {
      ok: false,
      note: "its check already holds before the action (the clean run's record satisfies it): make expect name this job's own record (its key, a value only this job has), or name the evidence field that identifies the new record in newEvidence",
    };
  // Without the final check's word (its probe finds the record by the key), evidence must at least differ between runs.
  const a = clean && completionOf(clean.entries, step.id)?.evidence;
  const b = completionOf(repeat.entries, step.id)?.evidence;
  const checked = [clean, repeat].every((r) => r && verifiedByProbe(r.entries, step.id));
  if (!checked && a && b && JSON.stringify(what(a)) === JSON.stringify(what(b)))
    return {
      ok: false,
      note: 'the clean run and its repeat recorded the same evidence: it names no record of its own (add the new record id to expect.evidence)',
    };
  return heldBefore
    ? { ok: true, note: `held before the action; ${step.newEvidence?.join(', ')} changed` }
    : { ok: true };
}

/** The verdicts of every step from the runs made (`runs` holds the clean run and the faults' runs). */
export function verdicts(playbook: Playbook, runs: readonly RunOutcome[]): StepVerdict[] {
  const clean = runs.find((r) => r.scenario.fault === 'clean');
  return playbook.steps.flatMap((step, stepIndex): StepVerdict[] => {
    const at = (fault: FaultKind): RunOutcome | undefined =>
      runs.find((r) => r.scenario.fault === fault && r.scenario.stepIndex === stepIndex);
    if (!at('kill-before') && !at('kill-after')) return [];
    let verify: Mark = { na: 'no clean run' };
    if (clean) {
      const done = completionOf(clean.entries, step.id);
      const evidence = done?.evidence ?? {};
      verify = !done
        ? failed(clean, 'the clean run did not complete it')
        : Object.keys(evidence).length > 0 || done.evidenceRef
          ? { ok: true }
          : { ok: false, note: 'verify gave no evidence' };
    }

    const succeeded = (o: RunOutcome | undefined, what: string): Mark =>
      !o ? { na: 'not run' } : o.status === 'SUCCEEDED' ? { ok: true } : failed(o, what);

    let rerun: Mark = { na: 'a write (its probe decides)' };
    let probe: Mark = { na: 'a read' };
    if (step.kind === 'read') {
      // The kill after the action first: it is the one that runs the read twice.
      const marks = (['kill-after', 'kill-mid', 'kill-before'] as const)
        .map((f) => [f, at(f)] as const)
        .filter(([, o]) => o?.struck)
        .map(([f, o]) => succeeded(o, `re-run after ${f}`));
      rerun = marks.find((m) => 'ok' in m && !m.ok) ?? marks[0] ?? { na: 'no fault struck' };
    } else {
      const after = at('kill-after');
      const before = at('kill-before');
      if (after?.struck) {
        const done = completionOf(after.entries, step.id);
        const reprobed = after.entries.some(
          (e) => e.type === 'reconciled' && e.step === step.id && e.detail?.probe === 'absent',
        );
        if (reprobed)
          probe = { ok: false, note: 'killed after its action, the probe said absent: it acted twice' };
        else if (after.status !== 'SUCCEEDED') probe = failed(after, 'killed after its action');
        else if (done?.evidence?.reconciled !== true)
          probe = { ok: false, note: 'killed after its action, the step completed without its probe' };
        else probe = { ok: true, note: 'found the effect' };
      } else probe = { na: 'the kill after the action did not strike' };
      if ('ok' in probe && probe.ok && before?.struck && before.status !== 'SUCCEEDED')
        probe = failed(before, 'killed before its action');
    }

    let drop: Mark = { na: 'a read' };
    if (step.kind === 'write') {
      const d = at('drop-response');
      const dropped = 'its answer dropped after the site committed';
      const as = d?.commitsAs ? ` (${d.commitsAs})` : '';
      // A second committed write is the finding, whatever became of the job.
      drop = !d
        ? { na: 'not run (its application is not behind the proxy)' }
        : !d.struck
          ? { na: 'the step sent no write request' }
          : d.commits !== 1
            ? {
                ok: false,
                note: `${dropped}, the site committed ${d.commits} writes${as} in the step (${d.status})`,
              }
            : d.status !== 'SUCCEEDED'
              ? failed(d, dropped)
              : { ok: true, ...(d.background ? { note: `background: ${d.background}` } : {}) };
    }

    const lost = at('browser-lost');
    const restore: Mark = !lost?.struck
      ? { na: 'the browser was not lost' }
      : succeeded(lost, 'browser lost before the step');

    const ms = clean ? stepMs(clean.entries, step.id) : undefined;
    const own = ownMark(step, runs);
    const marks = [verify, own, rerun, probe, drop, restore];
    return [
      {
        stepIndex,
        id: step.id,
        kind: step.kind,
        verify,
        own,
        rerun,
        probe,
        drop,
        restore,
        ...(ms === undefined ? {} : { ms }),
        safe: marks.every((m) => !('ok' in m) || m.ok),
      },
    ];
  });
}

const cell = (m: Mark): string => ('na' in m ? '-' : m.ok ? 'ok' : 'FAIL');

/** The table `playbook test` prints, then one line per problem (`clean`: the clean run, said first when it failed). */
export function formatVerdicts(playbookId: string, list: readonly StepVerdict[], clean?: RunOutcome): string {
  const rows = [
    ['#', 'step', 'kind', 'verify', 'own', 're-run', 'probe', 'drop', 'restore', 'time', 'safe'],
    ...list.map((v) => [
      String(v.stepIndex + 1),
      v.id,
      v.kind,
      cell(v.verify),
      cell(v.own),
      cell(v.rerun),
      cell(v.probe),
      cell(v.drop),
      cell(v.restore),
      v.ms === undefined ? '-' : `${(v.ms / 1000).toFixed(1)} s`,
      v.safe ? 'yes' : 'NO',
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const lines = rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  const problems = list.flatMap((v) =>
    (['verify', 'own', 'rerun', 'probe', 'drop', 'restore'] as const)
      .map((k) => v[k])
      .filter((m): m is { ok: false; note: string } => 'ok' in m && !m.ok)
      .map((m) => `  ${v.id}: ${m.note}`),
  );
  const unsafe = list.filter((v) => !v.safe).map((v) => v.id);
  const cleanLine =
    clean && clean.status !== 'SUCCEEDED'
      ? [`the clean run did not succeed: ${clean.status}${clean.detail ? ` (${clean.detail})` : ''}`]
      : [];
  return [
    `${playbookId}`,
    ...cleanLine,
    ...lines,
    '',
    unsafe.length === 0 && cleanLine.length === 0
      ? `every step is safe to retry (${list.length} steps)`
      : unsafe.length === 0
        ? 'NOT safe: the clean run did not succeed'
        : `NOT safe to retry: ${unsafe.join(', ')}`,
    ...problems,
  ].join('\n');
}
