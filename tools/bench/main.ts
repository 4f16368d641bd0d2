/**
 * `npm run bench -- [--json] [--runs N] [--browser-runs N] [--sections recovery,overhead,cost,concurrency,browser]`
 * `npm run bench -- --sections scale [--scale-jobs 1000] [--scale-tenants 10]`: the load simulation (`scale/run.ts`)
 * `npm run bench -- --sections agent [--agent-runs 1] [--agent-model <spec> [--model-server]]`: a model in the loop (`agent.ts`)
 * `--site-latency p50=300,p95=1200`: the recovery section runs again with the shop answering that slowly
 * `--lambda-runtime node22-cache|node22|node20`: the Node the stacks' functions run on (default: Lambda's Node 22 with the compile cache)
 *
 * Measures, in one run on the local stack, Belay against the naive baseline: recovery from a
 * crash in step 12, coordinator overhead per step (warm and cold), cost per job, 20 jobs
 * under a browser cap of 5, and the browser layer. Every figure is printed with its unit, the
 * statistic and how many runs it is over, the load average while it was measured, and its
 * target with PASS/MISS (targets are reported, not asserted). Progress goes to stderr.
 *
 * Exit status: 0 when every selected section ran and no invariant broke (a missed target is
 * not a failure); 1 otherwise. Everything it starts is stopped, and checked to be gone.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { LatencyProfile } from '../../demo/sites/http/latency.ts';
import { siteLatencyArgument } from '../../demo/sites/latency-option.ts';
import { isProcessAlive, waitForExit } from '../../local/chromium.ts';
import { agentModelSetup, runAgent } from './agent.ts';
import { type BrowserSamples, runBrowser } from './browser.ts';
import { runConcurrency } from './concurrency.ts';
import { BenchContext } from './context.ts';
import { runCost } from './cost.ts';
import { countedSample } from './counted.ts';
import { killNaiveLeftovers, naivePids } from './naive-runner.ts';
import { overheadSample, overheadSection, runColdOverhead } from './overhead.ts';
import { runRecovery } from './recovery.ts';
import {
  type BenchReport,
  DEFAULT_SECTIONS,
  formatReport,
  loadAverage,
  newReport,
  SECTION_NAMES,
  type SectionName,
  type SectionResult,
} from './report.ts';
import { lambdaRuntime, RUNTIME_NAMES, type RuntimeName, runtimeLabel } from './runtimes.ts';
import { runScale } from './scale/run.ts';

/** Sections that run jobs on a local stack (the others start none). */
const STACK_SECTIONS: readonly SectionName[] = ['recovery', 'overhead', 'cost', 'concurrency', 'agent'];

interface Options {
  json: boolean;
  runs: number;
  browserRuns: number;
  sections: SectionName[];
  verbose: boolean;
  scaleJobs: number;
  scaleTenants: number;
  scaleTimeoutMinutes: number;
  scaleSockets: number;
  agentRuns: number;
  agentModel: string;
  modelServer: boolean;
  siteLatency?: LatencyProfile;
  lambdaRuntime: RuntimeName;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('not a positive integer');
  return n;
}

function sectionList(value: string): SectionName[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!(SECTION_NAMES as readonly string[]).includes(n))
      throw new InvalidArgumentError(`unknown section "${n}" (choose from ${SECTION_NAMES.join(', ')})`);
  }
  return SECTION_NAMES.filter((s) => names.includes(s));
}

function parseOptions(argv: string[]): Options {
  return new Command()
    .name('npm run bench --')
    .description('Belay against the naive baseline, measured on the local stack.')
    .option('--json', 'print the report as JSON (progress still goes to stderr)', false)
    .option('--verbose', "also print every job's progress lines (stderr)", false)
    .option('--runs <n>', 'runs each job-level median is taken over', positive, 3)
    .option('--browser-runs <n>', 'runs of each browser-layer measurement', positive, 20)
    .option(
      '--sections <list>',
      `comma-separated, from ${SECTION_NAMES.join(',')} (default: all but scale and agent)`,
      sectionList,
      [...DEFAULT_SECTIONS],
    )
    .option(
      '--site-latency <profile>',
      'recovery: run it again with the shop answering as slowly as a real application, a log-normal delay per response with this median and 95th percentile (ms), e.g. p50=300,p95=1200; both are printed',
      siteLatencyArgument,
    )
    .addOption(
      new Option(
        '--lambda-runtime <name>',
        "the Node the stacks' functions run on: Lambda's Node 22 (fetched from npm) with each bundle's compile cache, as deployed, or without it, or this project's Node 20",
      )
        .choices(RUNTIME_NAMES)
        .default('node22-cache'),
    )
    .option('--agent-runs <n>', 'agent: rounds of its runs (each round is about six jobs)', positive, 1)
    .option(
      '--agent-model <spec>',
      "agent: the model Belay's and the naive agent's steps ask (anthropic:<id>, openai:<id>, bedrock:<id>), its key from BELAY_AGENT_* as a deployment reads it",
      'local',
    )
    .option(
      '--model-server',
      'agent: answer the anthropic: model on the loopback provider (local policy decisions, real SDK and wire format, no network)',
      false,
    )
    .option('--scale-jobs <n>', 'scale: jobs submitted at once', positive, 1000)
    .option('--scale-tenants <n>', 'scale: tenants they are spread over', positive, 10)
    .option('--scale-timeout-minutes <n>', 'scale: give up after this long', positive, 30)
    .option(
      '--scale-sockets <n>',
      "scale: sockets of the engine's AWS clients (the SDK's default is 50)",
      positive,
      1000,
    )
    .parse(argv, { from: 'user' })
    .opts<Options>();
}

const t0 = performance.now();
function log(line: string): void {
  const [one] = loadAverage();
  process.stderr.write(
    `[bench ${((performance.now() - t0) / 1000).toFixed(0).padStart(5)}s load ${one.toFixed(2)}] ${line}\n`,
  );
}

/** Runs one section, recording a failure instead of stopping the others. */
async function attempt<T>(report: BenchReport, name: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    log(`section ${name}: start`);
    const value = await fn();
    log(`section ${name}: done`);
    return value;
  } catch (err) {
    const message = err instanceof Error ? `${err.message}` : String(err);
    report.errors.push(`section ${name}: ${message}`);
    log(`section ${name} FAILED: ${message}`);
    return undefined;
  }
}

async function main(options: Options): Promise<number> {
  const report = newReport(options.runs, options.browserRuns);
  // Checked before anything starts: a missing key fails here, not after the other sections.
  const agentModel = options.sections.includes('agent')
    ? await agentModelSetup(options.agentModel, options.modelServer)
    : undefined;
  const stacks = options.sections.some((s) => STACK_SECTIONS.includes(s));
  // Fetched before anything starts: a machine without it fails here, not after the other sections.
  const runtime = stacks ? await lambdaRuntime(options.lambdaRuntime, log) : {};
  if (stacks) log(`functions run on ${runtimeLabel(options.lambdaRuntime, runtime.node?.version)}`);
  const ctx = new BenchContext({
    lambdaRuntime: runtime,
    stackEnv: agentModel?.env ?? {},
    runs: options.runs,
    browserRuns: options.browserRuns,
    dataDir: await mkdtemp(join(tmpdir(), 'belay-bench-')),
    log,
    verbose: options.verbose,
  });
  const want = (s: SectionName): boolean => options.sections.includes(s);
  const results = new Map<SectionName, SectionResult>();
  /** The recovery section again with the site latency profile, printed right after it. */
  const slowRecovery: SectionResult[] = [];
  const raw: Record<string, unknown> = {};
  const interrupted = (): void => {
    log('interrupted: stopping everything');
    killNaiveLeftovers();
    void ctx.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    if (want('recovery')) {
      const r = await attempt(report, 'recovery', () => runRecovery(ctx));
      if (r) {
        results.set('recovery', r.result);
        raw.recovery = r.samples;
      }
      const latency = options.siteLatency;
      if (latency) {
        const slow = await attempt(report, 'recovery (site latency)', () => runRecovery(ctx, { latency }));
        if (slow) {
          slowRecovery.push(slow.result);
          raw.recoveryWithSiteLatency = { latency, ...slow.samples };
        }
      }
    }
    let warm: Parameters<typeof overheadSection>[0] | undefined;
    if (want('overhead')) {
      warm = await attempt(report, 'overhead (warm)', async () => {
        const started = performance.now();
        const runs = await ctx.ensureCleanWarm(ctx.runs);
        return {
          samples: runs.map(overheadSample),
          load: BenchContext.loadOf(runs),
          seconds: (performance.now() - started) / 1000,
        };
      });
    }
    if (want('cost')) {
      const r = await attempt(report, 'cost', () => runCost(ctx));
      if (r) {
        results.set('cost', r.result);
        raw.cost = r.samples;
      }
    }
    if (want('concurrency')) {
      const r = await attempt(report, 'concurrency', () => runConcurrency(ctx));
      if (r) {
        results.set('concurrency', r.result);
        raw.concurrency = r.samples;
      }
    }
    if (want('agent')) {
      const r = await attempt(report, 'agent', () =>
        runAgent(ctx, { runs: options.agentRuns, ...(agentModel ? { model: agentModel } : {}) }),
      );
      if (r) {
        results.set('agent', r.result);
        raw.agent = r.samples;
      }
    }
    if (want('scale')) {
      const r = await attempt(report, 'scale', () =>
        runScale({
          jobs: options.scaleJobs,
          tenants: options.scaleTenants,
          stepMs: 20,
          approveMs: 500,
          timeoutMs: options.scaleTimeoutMinutes * 60_000,
          sockets: options.scaleSockets,
          dataDir: ctx.dataDir,
          log,
          pids: ctx.pids,
        }),
      );
      if (r) {
        results.set('scale', r.result);
        raw.scale = r.samples;
      }
    }
    await ctx.stopStack('warm');
    const cold = want('overhead')
      ? await attempt(report, 'overhead (cold)', () => runColdOverhead(ctx))
      : undefined;
    let browser: BrowserSamples | undefined;
    if (want('browser')) {
      const r = await attempt(report, 'browser', () =>
        runBrowser({ runs: options.browserRuns, log, pids: ctx.pids }),
      );
      if (r) {
        results.set('browser', r.result);
        raw.browser = r.samples;
        browser = r.samples;
      }
    }
    if (warm || cold) {
      const load = { start: loadAverage(), end: loadAverage() };
      const counted = ctx.cleanWarm.slice(0, ctx.runs).map(countedSample);
      const cleanJobs = [...ctx.cleanJobs.values()];
      results.set(
        'overhead',
        overheadSection(
          warm ?? { samples: [], load, seconds: 0 },
          cold ?? { cold: [], load, seconds: 0 },
          browser,
          warm ? counted : [],
          cleanJobs,
        ),
      );
      raw.overhead = { warm: warm?.samples ?? [], cold: cold?.cold ?? [], counted, cleanJobs };
    }
  } finally {
    await ctx.close();
    await agentModel?.server?.close();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  const left = await leftovers([...ctx.pids, ...naivePids]);
  if (left.length) report.errors.push(`processes still running after the benchmark: ${left.join(', ')}`);
  else log(`all ${ctx.pids.size + naivePids.size} processes the benchmark started are gone`);

  report.sections = SECTION_NAMES.flatMap((s) => [
    ...(results.has(s) ? [results.get(s) as SectionResult] : []),
    ...(s === 'recovery' ? slowRecovery : []),
  ]);
  report.loadAverage.end = loadAverage();
  const violations = report.sections.flatMap((s) => s.violations);
  report.ok = report.errors.length === 0 && violations.length === 0;
  // Six significant digits are plenty for timings on a shared machine.
  const tidy = (_key: string, value: unknown): unknown =>
    typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(6)) : value;
  if (options.json) console.log(JSON.stringify({ ...report, samples: raw }, tidy, 2));
  else console.log(formatReport(report));
  return report.ok ? 0 : 1;
}

async function leftovers(pids: number[]): Promise<number[]> {
  await Promise.all(pids.map((p) => waitForExit(p, 5_000)));
  return pids.filter(isProcessAlive);
}

process.exitCode = await main(parseOptions(process.argv.slice(2)));
