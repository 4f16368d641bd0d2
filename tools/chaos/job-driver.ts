/**
 * One job of a chaos run, end to end: arm its worker kills, submit it through the API, act
 * as its people (approvals, one-time codes, reviews), inject its faults at their moments,
 * and, once it ends, check it against the sites' own records and the workers' events.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminWrites } from '../../demo/sites/admin-client.ts';
import { AdminRequestError } from '../../demo/sites/errors.ts';
import { DEMO_TENANT } from '../../local/seed.ts';
import type { SiteItem } from './attribution.ts';
import { type EntryView, HttpStatusError, type JobView } from './clients.ts';
import { armedFault, type RunContext, StackDownError, withStack } from './context.ts';
import { siteCounts, type WriteCount, writeCounts } from './counting.ts';
import { describeFault, type FaultKind, isDrop, type PlannedFault } from './faults.ts';
import { type Asks, asksPerStep, reviewsAllowed } from './ledger.ts';
import { type JobSpec, keyed } from './plan.ts';

export type { WriteCount } from './counting.ts';

import type { SiteName } from './sites.ts';
import { openIntent, type ReExecution, recordProblems, reExecutions } from './verify.ts';

/** The layout check of a job: no POST reached the site between the switch and the review. */
export interface LayoutCheck {
  site: SiteName;
  step: string;
  /** The step the job waited for review at (undefined: it never did). */
  reviewStep?: string;
  postsAfterSwitch: string[];
  ok: boolean;
}

export interface JobOutcome {
  jobId: string;
  playbook: string;
  /** The records (or accounts, sites) the job held: see `JobSpec.resources`. */
  resources: string[];
  status: string;
  seconds: number;
  /** Each planned fault (`kind@step`) and whether it was injected. */
  faults: { kind: FaultKind; fault: string; injected: boolean }[];
  writes: WriteCount[];
  /** Write steps the job verified at their step (their checkpoint is in the ledger). */
  verifiedWrites: number;
  recordProblems: string[];
  reExecuted: ReExecution[];
  layoutChecks: LayoutCheck[];
  /** The people the job asked, per step (from its ledger). */
  asks: Record<string, Asks>;
  /** The job's retry budget: a write may come back to review once per retry. */
  retryBudget: number;
  stuck: boolean;
  /** Failure reason, or what a stuck job was doing. */
  detail?: string;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

type Tracked = { f: PlannedFault; injected: boolean };

export async function driveJob(ctx: RunContext, spec: JobSpec): Promise<JobOutcome> {
  const started = Date.now();
  const deadline = started + ctx.jobTimeoutMs;
  const steps = spec.steps;
  const faults: Tracked[] = spec.faults.map((f) => ({ f, injected: false }));
  const answered = new Set<string>();
  const reviewsAt = new Map<string, number>();
  let gaveUp: string | undefined;
  const layoutChecks: LayoutCheck[] = [];
  let layout: { t: Tracked; site: SiteName; switchedAt: number; check?: LayoutCheck } | undefined;
  const note = (text: string): void => ctx.say(`  ${spec.jobId}: ${text}`);
  const stack = <T>(what: string, fn: Parameters<typeof withStack<T>>[3]): Promise<T> =>
    withStack(ctx, `${spec.jobId} ${what}`, deadline, fn);

  for (const { f } of faults) {
    if (!('point' in f)) continue;
    const armed = {
      kind: f.kind,
      jobId: spec.jobId,
      point: f.point,
      stepIndex: f.stepIndex,
      ...(f.action ? { action: f.action } : {}),
      fired: false,
      done: false,
    };
    await stack('arm', (h) => h.control.arm(armedFault(armed)));
    ctx.armed.push(armed);
  }
  // Counted by site or on its records: what its write sites held before it (a write after is its own).
  const before: Record<SiteName, SiteItem[]> = {};
  if (spec.counting !== 'key')
    for (const site of new Set(spec.writes.filter((w) => w.countedBy === 'site').map((w) => w.site)))
      before[site] = (await stack('records', (h) => h.site(site).writes())).items;
  const drop = faults.find((t) => isDrop(t.f.kind));
  if (drop && 'site' in drop.f) {
    const site = drop.f.site;
    const dropMode = drop.f.kind === 'drop-write-no-byte' ? drop.f.mode : 'status-line';
    await stack('drop', (h) => h.site(site).setFaults({ dropNextWriteResponse: true, dropMode }));
  }

  let view: JobView | undefined;
  let stuck = false;
  let submitted = false;
  let progress = { mark: '', at: Date.now() };
  for (;;) {
    try {
      if (!submitted) {
        const created = await stack('submit', (h) => h.api.submit(spec.body));
        keyed(spec, DEMO_TENANT, created.createdAt);
      }
      submitted = true;
      view = await stack('status', (h) => h.api.job(spec.jobId));
      if (TERMINAL.has(view.status)) break;
      const mark = `${view.status}|${view.stepsCompleted}|${view.updatedAt}|${ctx.events.count(spec.jobId)}`;
      if (mark !== progress.mark) progress = { mark, at: Date.now() };
      const stalled = Date.now() - progress.at > ctx.stallTimeoutMs;
      if (Date.now() > deadline || stalled || ctx.signal?.aborted || gaveUp) {
        if (stalled && !gaveUp) gaveUp = `no progress for ${Math.round(ctx.stallTimeoutMs / 1000)}s`;
        stuck = true;
        break;
      }
      await momentFaults(view);
      await answerWait(view);
    } catch (err) {
      if (err instanceof StackDownError) {
        stuck = true;
        break;
      }
      // An API error (a 5xx while the stack restarts, a 409 of a race): look again shortly.
      if (!(err instanceof HttpStatusError || err instanceof AdminRequestError)) throw err;
      if (Date.now() > deadline) {
        stuck = true;
        break;
      }
    }
    await sleep(300);
  }

  async function momentFaults(v: JobView): Promise<void> {
    for (const t of faults) {
      const { f } = t;
      if (
        t.injected ||
        !(f.kind === 'browser-kill' || f.kind === 'sign-in-expiry' || f.kind === 'stack-kill')
      )
        continue;
      // A step can also end without RunStep's points (a write reconciled by its probe): the pointer says.
      if (!ctx.events.reached(spec.jobId, f.stepIndex, f.moment) && v.stepsCompleted <= f.stepIndex) continue;
      const site = (f as { site: SiteName }).site;
      const where = f.moment === 'checkpoint' ? `as ${f.step} completed` : `in ${f.step}`;
      if (f.kind === 'browser-kill') {
        const id = v.sessions[site]?.sessionId;
        if (!id) continue;
        const killed = await stack('kill browser', (h) => h.control.killBrowser(id)).catch((err: unknown) => {
          if (err instanceof HttpStatusError && err.status === 404) return undefined;
          throw err;
        });
        if (!killed) continue;
        note(`killed the Chromium of its ${site} session (pid ${killed.pid}) ${where}`);
      } else if (f.kind === 'sign-in-expiry') {
        const { expired } = await stack('expire', (h) => h.site(site).expireSessions());
        note(`expired every sign-in of ${site} (${expired}) ${where}`);
      } else if (!(await ctx.killStack(`${spec.jobId} ${where}`))) continue;
      t.injected = true;
      ctx.injected[f.kind]++;
    }
  }

  async function answerWait(v: JobView): Promise<void> {
    const w = v.wait;
    if (!w) return;
    const key = `${w.kind}:${w.step}:${w.requestedAt}`;
    if (answered.has(key)) return;
    // A request the stack took but whose reply a stack kill lost is sent again after the
    // restart and refused (409: the job no longer waits). That answer still counts.
    let sends = 0;
    const send = <T>(what: string, fn: Parameters<typeof withStack<T>>[3]): Promise<T> =>
      stack(what, (h) => {
        sends++;
        return fn(h);
      });
    const counted = (): void => {
      if (w.kind === 'approval') ctx.humans.approvals++;
      else if (w.kind === 'review') ctx.humans.reviews++;
      else ctx.humans.mfaCodes++;
    };
    try {
      if (w.kind === 'approval') {
        const t = faults.find((x) => x.f.kind === 'layout-change' && x.f.step === w.step && !x.injected);
        if (t && 'site' in t.f) {
          const site = t.f.site;
          ctx.layoutWindows.add(site);
          const switchedAt = Date.now();
          await stack('layout', (h) => h.site(site).setFaults({ changedLayout: true }));
          layout = { t, site, switchedAt };
          t.injected = true;
          ctx.injected['layout-change']++;
          note(`switched ${site} to its changed layout while waiting for approval of ${w.step}`);
        }
        await send('approve', (h) => h.api.decide(spec.jobId, { step: w.step, decision: 'approve' }));
      } else if (w.kind === 'review') {
        const n = (reviewsAt.get(w.step) ?? 0) + 1;
        reviewsAt.set(w.step, n);
        // The engine fails a job whose write keeps coming back; a job that asks more has looped.
        if (n > reviewsAllowed(v.retryBudget)) {
          gaveUp = `the job asked for review at ${w.step} ${n} times, more than its retry budget (${v.retryBudget}) allows: the person stops answering`;
          return;
        }
        await review(w.step, send);
      } else {
        const app = steps.find((s) => s.id === w.step)?.app as SiteName | undefined;
        const username = ctx.usernameOf(spec.body.accounts[app ?? ''] ?? '');
        if (!app || !username) return;
        const code = await stack('outbox', (h) => h.site(app).latestCode(username));
        if (!code) return;
        await send('mfa', (h) => h.api.mfa(spec.jobId, code));
        note(`sent the one-time code from the ${app} outbox (${w.step})`);
      }
      counted();
      answered.add(key);
    } catch (err) {
      if (err instanceof HttpStatusError && err.status === 409 && sends > 1) {
        counted();
        answered.add(key);
        note(`the ${w.kind} answer at ${w.step} was taken before the stack went down (409 when sent again)`);
        return;
      }
      // 409/422: the job moved on, or the code was not the latest: look again next round.
      if (!(err instanceof HttpStatusError || err instanceof AdminRequestError) || err.status >= 500)
        throw err;
    }
  }

  async function review(step: string, send: typeof stack): Promise<void> {
    if (layout && !layout.check) {
      const { site, switchedAt } = layout;
      const log = await stack('requests', (h) => h.site(site).requests());
      const posts = log.requests
        .filter((r) => r.method === 'POST' && Date.parse(r.at) >= switchedAt && !r.path.startsWith('/signin'))
        .map((r) => `POST ${r.path} ${r.status} at ${r.at}`);
      const check = {
        site,
        step: layout.t.f.step,
        reviewStep: step,
        postsAfterSwitch: posts,
        ok: posts.length === 0,
      };
      layout.check = check;
      layoutChecks.push(check);
      await stack('layout back', (h) => h.site(site).setFaults({ changedLayout: false }));
      ctx.layoutWindows.delete(site);
      note(
        `waits for review at ${step} after the layout switch; POSTs to ${site} since: ${posts.length}; switched back, approving`,
      );
      await send('approve review', (h) => h.api.decide(spec.jobId, { step, decision: 'approve' }));
      return;
    }
    // A person looks in the application for the write before answering (where the suite can
    // read its records; else they do not guess, and the engine looks again with the probe).
    const write = spec.writes.find((x) => x.step === step);
    let resolution: 'done' | 'absent' | undefined;
    if (write?.countedBy === 'site') {
      const entries = await stack('ledger', (h) => h.api.ledger(spec.jobId));
      if (openIntent(entries, step)) {
        const { counts } = await committed(entries, stack);
        resolution = (counts[write.key] ?? 0) > 0 ? 'done' : 'absent';
      }
    }
    note(`waits for review at ${step}; a person checked the site: ${resolution ?? 'no write in doubt'}`);
    await send('review', (h) =>
      h.api.decide(spec.jobId, { step, decision: 'approve', ...(resolution ? { resolution } : {}) }),
    );
  }

  return finish();

  async function finish(): Promise<JobOutcome> {
    const until = Date.now() + 120_000;
    const after = <T>(what: string, fn: Parameters<typeof withStack<T>>[3]): Promise<T> =>
      withStack(ctx, `${spec.jobId} ${what}`, until, fn);
    let detail = view?.failure ? `${view.failure.reason}: ${view.failure.message}` : undefined;
    if (!stuck && view?.status === 'FAILED') detail = `${detail ?? 'failed'}; ${await diagnose(view)}`;
    if (stuck) {
      detail = `${gaveUp ? `${gaveUp}; ` : ''}${await diagnose(view)}`;
      await after('cancel', (h) => h.api.cancel(spec.jobId)).catch(() => undefined);
    }
    if (layout && !layout.check) {
      const site = layout.site;
      layoutChecks.push({ site, step: layout.t.f.step, postsAfterSwitch: [], ok: false });
      await after('layout back', (h) => h.site(site).setFaults({ changedLayout: false }));
      ctx.layoutWindows.delete(site);
    }
    if (drop && 'site' in drop.f) {
      const site = drop.f.site;
      const flags = await after('faults', (h) => h.site(site).faults());
      if (flags.dropNextWriteResponse)
        await after('drop off', (h) =>
          h.site(site).setFaults({ dropNextWriteResponse: false, dropMode: 'status-line' }),
        );
      else {
        drop.injected = true;
        ctx.injected[drop.f.kind]++;
        await after('drop mode back', (h) => h.site(site).setFaults({ dropMode: 'status-line' }));
      }
    }
    for (const a of ctx.armed.filter((x) => x.jobId === spec.jobId)) {
      a.done = true;
      const t = faults.find((x) => 'point' in x.f && x.f.point === a.point && x.f.stepIndex === a.stepIndex);
      if (t) t.injected = a.fired;
    }
    await ctx.events.drain();
    const entries = await after('ledger', (h) => h.api.ledger(spec.jobId));
    const { counts, problems } = await committed(entries, after);
    const writes = writeCounts(spec, counts, entries);
    // The sites' files say what the records hold, where the job worked on the stack's demo sites only.
    const demoApps = await after('sites', async (h) => h.demoApps);
    const demo = spec.sites.every((s) => demoApps.has(s));
    return {
      jobId: spec.jobId,
      playbook: spec.playbook,
      resources: spec.resources,
      status: stuck ? 'STUCK' : (view?.status ?? 'UNKNOWN'),
      seconds: (Date.now() - started) / 1000,
      faults: faults.map((t) => ({ kind: t.f.kind, fault: describeFault(t.f), injected: t.injected })),
      writes,
      verifiedWrites: entries.filter(
        (e) => e.type === 'step-completed' && spec.writes.some((w) => w.step === e.step),
      ).length,
      recordProblems: [...problems, ...(demo ? recordProblems(spec, ctx.dataDir, entries) : [])],
      reExecuted: reExecutions(entries, ctx.events.of(spec.jobId)),
      layoutChecks,
      asks: asksPerStep(entries),
      retryBudget: view?.retryBudget ?? 0,
      stuck,
      ...(detail ? { detail } : {}),
    };
  }

  /** The job's committed writes per write step counted on its site, from the sites' records now (`counting.ts`). */
  async function committed(
    entries: readonly EntryView[],
    call: typeof stack,
  ): Promise<{ counts: Record<string, number>; problems: string[] }> {
    const records: Record<SiteName, AdminWrites> = {};
    for (const site of new Set(spec.writes.filter((w) => w.countedBy === 'site').map((w) => w.site)))
      records[site] = await call('writes', (h) => h.site(site).writes());
    return siteCounts(spec, before, records, entries);
  }

  async function diagnose(v: JobView | undefined): Promise<string> {
    const h = ctx.stack.handle;
    if (!h) return 'the stack was down';
    const entries = await h.api.ledger(spec.jobId).catch(() => [] as EntryView[]);
    const executions = await h.control.executions(spec.jobId).catch(() => []);
    const last = entries
      .slice(-4)
      .map((e) => `${e.type}${e.step ? ` ${e.step}` : ''}`)
      .join(', ');
    const failures = executions
      .flatMap((x) =>
        x.failures.map((f) => `${x.name.slice(-3)} ${f.error ?? f.type}: ${(f.cause ?? '').slice(0, 160)}`),
      )
      .slice(-3)
      .join(' | ');
    return `status ${v?.status ?? '?'}${v?.wait ? ` waiting for ${v.wait.kind} at ${v.wait.step}` : ''}; last entries: ${last}; executions: ${executions.map((x) => `${x.name.slice(-3)} ${x.status}`).join(', ')}${failures ? `; failures: ${failures}` : ''}`;
  }
}
