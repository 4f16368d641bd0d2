/**
 * A chaos run: the stack as a child process, N jobs through the HTTP API a few at a time,
 * seeded faults, and a summary checked against the sites' own records.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePorts } from '../../local/ports.ts';
import { type ArmedWorkerFault, armedFault, emptyCounts, type RunContext } from './context.ts';
import { EventLog } from './events.ts';
import { FAULT_KINDS } from './faults.ts';
import type { JobOutcome } from './job-driver.ts';
import { type Plan, planRun } from './plan.ts';
import { createPrng } from './prng.ts';
import { type ChaosSummary, jobLine, jobsPass, summarizeJobs } from './report.ts';
import { schedule } from './schedule.ts';
import { loadRunPlaybooks, type RunSelection, runAccounts, runSites } from './setup.ts';
import type { SiteName } from './sites.ts';
import { ChaosStack } from './stack-process.ts';

export type { ChaosSummary } from './report.ts';

export interface ChaosOptions extends RunSelection {
  runs: number;
  seed: number;
  /** Jobs at once (default 3). */
  concurrency?: number;
  /** Default: a new temporary directory. */
  dataDir?: string;
  /** Remove the data directory at the end: `on-success` (default for a temporary one), `always`, `never` (default for a given one). */
  removeDataDir?: 'on-success' | 'always' | 'never';
  /** A job that has not ended after this long is stuck (default 5 min). */
  jobTimeoutMs?: number;
  /** A job with nothing new (status, ledger, worker events) for this long is stuck (default 3 min). */
  stallTimeoutMs?: number;
  /** No job starts after this long (default: 4 min per job). */
  runTimeoutMs?: number;
  say?: (line: string) => void;
  signal?: AbortSignal;
  /**
   * The demo sites de-duplicate writes by key (default false: like most real sites, every
   * write request commits a record of its own, so a write sent twice shows as two).
   */
  dedupe?: boolean;
}

/** Runs the suite; never throws for a job's result (the summary says), only for a broken setup. */
export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const started = Date.now();
  const clock = (): string => `[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s]`;
  const say = (line: string): void => (options.say ?? console.log)(`${clock()} ${line}`);
  const concurrency = Math.max(1, options.concurrency ?? 3);
  const tempDir = options.dataDir === undefined;
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), 'belay-chaos-')));
  if (!tempDir) await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });

  // The playbooks, found as the stack it starts finds them, and the options checked against them.
  const run = await loadRunPlaybooks(options);
  say(
    `Belay chaos: ${options.runs} jobs, seed ${options.seed}, concurrency ${concurrency}, data in ${dataDir}`,
  );
  say(`playbooks (jobs take them in turn): ${run.playbooks.join(', ')}`);

  const [api, control, anchor, shop, crm, billing] = (await freePorts(6)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const stack = new ChaosStack(dataDir, { api, control, anchor, shop, crm, billing }, run.stackArgs);
  const events = new EventLog(stack);
  const restarts: ChaosSummary['stackRestarts'] = [];
  const armed: ArmedWorkerFault[] = [];
  const injected = emptyCounts();
  let usernameOf: RunContext['usernameOf'] = () => undefined;
  let restarting: Promise<boolean> | undefined;

  // The caller's signal, or a driver that failed: either stops every job (see `schedule`).
  const stop = new AbortController();
  if (options.signal?.aborted) stop.abort();
  options.signal?.addEventListener('abort', () => stop.abort(), { once: true });

  const ctx: RunContext = {
    stack,
    events,
    dataDir,
    jobTimeoutMs: options.jobTimeoutMs ?? 5 * 60_000,
    stallTimeoutMs: options.stallTimeoutMs ?? 3 * 60_000,
    say,
    injected,
    humans: { approvals: 0, reviews: 0, mfaCodes: 0 },
    usernameOf: (id) => usernameOf(id),
    armed,
    layoutWindows: new Set<SiteName>(),
    signal: stop.signal,
    async killStack(reason) {
      if (restarting || ctx.layoutWindows.size > 0 || !stack.handle) return false;
      restarting = (async () => {
        await events.drain();
        const down = Date.now();
        await stack.crash();
        say(`SIGKILL of the whole stack process (${reason}); starting it again on the same data directory`);
        const h = await stack.start();
        for (const a of armed.filter((x) => !x.fired && !x.done)) await h.control.arm(armedFault(a));
        const downSeconds = (Date.now() - down) / 1000;
        restarts.push({ reason, downSeconds });
        say(
          `the stack is back (pid ${h.pid}) after ${downSeconds.toFixed(1)}s; unfinished jobs resume from the ledger`,
        );
        return true;
      })();
      try {
        return await restarting;
      } finally {
        restarting = undefined;
      }
    },
  };
  events.onEvent((e) => {
    if (e.type !== 'fault-fired') return;
    const a = armed.find(
      (x) =>
        !x.fired &&
        x.jobId === e.info.jobId &&
        x.point === e.point &&
        x.stepIndex === e.info.stepIndex &&
        (x.action === undefined || x.action === e.info.action),
    );
    if (!a) return;
    a.fired = true;
    injected[a.kind]++;
    const what = a.action === undefined ? e.point : `${e.point} of action ${a.action}`;
    say(`  ${a.jobId}: SIGKILL of the step worker (pid ${e.pid}) ${what} in ${e.info.step}`);
  });

  const outcomes: JobOutcome[] = [];
  const notStarted: string[] = [];
  let leftovers: ChaosSummary['leftoverProcesses'] = [];
  let plan: Plan = { jobs: [], unplanned: {} };
  const planned = emptyCounts();
  try {
    const t0 = Date.now();
    const h = await stack.start();
    const dedupe = options.dedupe ?? false;
    // Like real sites, those that de-duplicate nothing also send requests of their own as a
    // form is submitted: in flight while a write goes, where a connection can be reused.
    for (const site of ['shop', 'crm', 'billing'] as const)
      await h.site(site).setFaults({ dedupe, busyPages: !dedupe });
    say(
      `the stack is up (pid ${h.pid}) in ${((Date.now() - t0) / 1000).toFixed(1)}s; the sites ${dedupe ? 'de-duplicate writes by key' : 'de-duplicate nothing (every write request commits a record) and their pages send requests of their own as a form is submitted'}`,
    );
    // What each site takes (said where it cannot take a fault), then the accounts, then the plan.
    const sites = await runSites(h, run, say);
    for (const [app, caps] of Object.entries(sites))
      if (caps.faults && !['shop', 'crm', 'billing'].includes(app)) await h.site(app).setFaults({ dedupe });
    const accounts = await runAccounts(h, options.accounts ?? []);
    usernameOf = accounts.usernameOf;
    plan = planRun(createPrng(options.seed), options.runs, options.seed, run.catalog, {
      playbooks: run.playbooks,
      inputs: run.inputs,
      accounts: accounts.byApp,
      sites,
    });
    for (const j of plan.jobs) for (const f of j.faults) planned[f.kind]++;
    say(`planned faults: ${FAULT_KINDS.map((k) => `${k} ${planned[k]}`).join(', ')}`);
    const unplanned = Object.entries(plan.unplanned);
    if (unplanned.length)
      say(
        `not planned (no job of the run can take them): ${unplanned.map(([k, n]) => `${k} ${n}`).join(', ')}`,
      );
    events.start();
    await schedule(
      ctx,
      plan.jobs,
      concurrency,
      started + (options.runTimeoutMs ?? plan.jobs.length * 240_000),
      (o) => {
        outcomes.push(o);
        say(jobLine(o, outcomes.length, plan.jobs.length));
      },
      notStarted,
      () => stop.abort(),
    );
  } finally {
    await events.stop();
    say('stopping the stack (ending its browser sessions) and checking that nothing is left running');
    leftovers = await stack.stop();
  }

  const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
  const jobs = summarizeJobs(outcomes);
  const summary: ChaosSummary = {
    seed: options.seed,
    runs: options.runs,
    playbooks: run.playbooks,
    concurrency,
    dataDir,
    wallSeconds: (Date.now() - started) / 1000,
    faultsInjected: { total: sum(ctx.injected), byKind: { ...ctx.injected } },
    faultsPlanned: { total: sum(planned), byKind: planned },
    faultsUnplanned: plan.unplanned,
    ...jobs,
    dedupe: options.dedupe ?? false,
    people: { ...ctx.humans },
    stackRestarts: restarts,
    notStarted,
    leftoverProcesses: leftovers,
    ok: jobsPass(jobs, plan.jobs.length) && notStarted.length === 0 && leftovers.length === 0,
  };
  const remove = options.removeDataDir ?? (tempDir ? 'on-success' : 'never');
  if (remove === 'always' || (remove === 'on-success' && summary.ok))
    rmSync(dataDir, { recursive: true, force: true });
  return summary;
}
