/**
 * Section `concurrency`: 20 checkout@1 jobs submitted at once, each on its own shop account
 * (the shop's cart is per account), under the plan `free` browser cap of 5. Reports jobs per
 * minute, the most browsers alive at once (sampled from the browser service every 250 ms; it
 * must never pass the cap) and the p50/p95 job time.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { LOAD_TEST_SHOPPER_COUNT } from '../../demo/accounts.ts';
import { PLAN_CAPS } from '../../lambdas/lib/capacity/plans.ts';
import { loadTestShopAccountId } from '../../local/seed.ts';
import { type BelayRun, runBelayJob } from './belay.ts';
import type { BenchContext } from './context.ts';
import { atMost, capViolations, type Figure, jobsPerMinute, percentile } from './figures.ts';
import { loadAverage, type SectionResult } from './report.ts';

export const CONCURRENT_JOBS = LOAD_TEST_SHOPPER_COUNT;
export const BROWSER_CAP = PLAN_CAPS.free;
const SAMPLE_MS = 250;

/** What the section measured, as the JSON carries it. */
export interface ConcurrencySamples {
  jobs: number;
  cap: number;
  /** First submission to the last job's end, ms. */
  elapsedMs: number;
  /** Per job: created -> SUCCEEDED, ms (queueing for a browser included). */
  jobMs: number[];
  /** Browsers running, sampled every 250 ms. */
  samples: { atMs: number; running: number }[];
  succeeded: number;
  ordersPlacedTotal: number;
}

/** Figures of the section (pure). */
export function concurrencyFigures(s: ConcurrencySamples): Figure[] {
  const most = s.samples.reduce((m, x) => Math.max(m, x.running), 0);
  return [
    {
      label: `jobs per minute (${s.jobs} jobs, cap ${s.cap})`,
      value: jobsPerMinute(s.succeeded, s.elapsedMs),
      unit: 'jobs/min',
      statistic: 'value',
      runs: 1,
      note: `${s.succeeded} of ${s.jobs} SUCCEEDED in ${(s.elapsedMs / 1000).toFixed(1)} s (first submission to last end)`,
    },
    {
      label: 'most browsers alive at once',
      value: most,
      unit: 'browsers',
      statistic: 'max',
      runs: s.samples.length,
      verdict: atMost(most, s.cap, `never above the cap of ${s.cap}`),
    },
    {
      label: 'job time p50 (queueing included)',
      value: percentile(s.jobMs, 0.5),
      unit: 'ms',
      statistic: 'p50',
      runs: s.jobMs.length,
    },
    {
      label: 'job time p95 (queueing included)',
      value: percentile(s.jobMs, 0.95),
      unit: 'ms',
      statistic: 'p95',
      runs: s.jobMs.length,
    },
  ];
}

/** VIOLATION lines for every sample over the cap. */
export function concurrencyViolations(s: ConcurrencySamples): string[] {
  const over = capViolations(s.samples, s.cap);
  const lines = over.map(
    (v) => `${v.running} browsers alive at +${(v.atMs / 1000).toFixed(2)} s, above the cap of ${s.cap}`,
  );
  if (s.succeeded !== s.jobs) lines.push(`${s.jobs - s.succeeded} of ${s.jobs} jobs did not succeed`);
  if (s.ordersPlacedTotal !== s.jobs) lines.push(`${s.ordersPlacedTotal} orders placed for ${s.jobs} jobs`);
  return lines;
}

export async function runConcurrency(
  ctx: BenchContext,
): Promise<{ result: SectionResult; samples: ConcurrencySamples }> {
  const started = performance.now();
  const load = loadAverage();
  const b = await ctx.stack('warm');
  const samples: ConcurrencySamples = {
    jobs: CONCURRENT_JOBS,
    cap: BROWSER_CAP,
    elapsedMs: 0,
    jobMs: [],
    samples: [],
    succeeded: 0,
    ordersPlacedTotal: 0,
  };
  // Browsers left by earlier sections must not count: none should run now.
  const before = b.stack.anchor.sessions().filter((s) => s.status === 'running').length;
  if (before > 0) ctx.log(`concurrency: ${before} browser session(s) still running before the jobs start`);
  const t0 = performance.now();
  let sampling = true;
  const sampler = (async (): Promise<void> => {
    while (sampling) {
      const running = b.stack.anchor.sessions().filter((s) => s.status === 'running').length;
      samples.samples.push({ atMs: performance.now() - t0, running });
      if (running > BROWSER_CAP)
        ctx.log(`VIOLATION: ${running} browsers alive, above the cap of ${BROWSER_CAP}`);
      await sleep(SAMPLE_MS);
    }
  })();
  let done = 0;
  const progress = setInterval(() => {
    const running = samples.samples.at(-1)?.running ?? 0;
    ctx.log(
      `concurrency: ${done}/${CONCURRENT_JOBS} jobs done, ${running} browsers alive, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
  }, 15_000);
  let runs: PromiseSettledResult<BelayRun>[];
  try {
    runs = await Promise.allSettled(
      Array.from({ length: CONCURRENT_JOBS }, (_, i) =>
        runBelayJob(b, {
          jobId: ctx.jobId(`conc${String(i + 1).padStart(2, '0')}`),
          accountId: loadTestShopAccountId(i + 1),
          timeoutMs: 30 * 60_000,
        }).then((run) => {
          done++;
          return run;
        }),
      ),
    );
  } finally {
    samples.elapsedMs = performance.now() - t0;
    sampling = false;
    clearInterval(progress);
    await sampler;
  }
  const errors: string[] = [];
  for (const r of runs) {
    if (r.status === 'rejected') {
      errors.push(String(r.reason));
      continue;
    }
    samples.jobMs.push(r.value.wallMs);
    samples.ordersPlacedTotal += r.value.ordersPlaced;
    if (r.value.status === 'SUCCEEDED') samples.succeeded++;
    else errors.push(`${r.value.jobId} ended ${r.value.status}: ${r.value.failure ?? 'no failure recorded'}`);
  }
  const result: SectionResult = {
    section: 'concurrency',
    title: `Concurrency: ${CONCURRENT_JOBS} checkout@1 jobs submitted at once, browser cap ${BROWSER_CAP} (plan free)`,
    loadAverage: { start: load, end: loadAverage() },
    figures: concurrencyFigures(samples),
    notes: [
      `Each job on its own shop account (acct_demo_shop_01..${CONCURRENT_JOBS}); all submitted through the API at once; place-order approved through the API as soon as asked.`,
      `Browsers alive = sessions the browser service reports running, sampled every ${SAMPLE_MS} ms (${samples.samples.length} samples); the cap is enforced by capacity leases in DynamoDB.`,
      'Job time = job created -> SUCCEEDED (waiting for a browser included). Jobs per minute = jobs succeeded / (first submission -> last end).',
      'Warm workers (lambdaMode warm) on the same 2-core machine as the browsers.',
      ...errors.map((e) => `job error: ${e.slice(0, 300)}`),
    ],
    violations: concurrencyViolations(samples),
    durationSeconds: (performance.now() - started) / 1000,
  };
  return { result, samples };
}
