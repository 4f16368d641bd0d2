/**
 * The wall-time reference of the overhead: Belay's clean checkout@1 job time over the naive
 * runner's, both measured in the same run (the recovery section's clean runs) at the shop's own
 * speed and with a site latency profile. A shared machine moves both alike; their ratio is what
 * Belay's coordination costs a job, with the naive script as the yardstick.
 */
import { atMost, type Figure, median } from './figures.ts';

/** Target of Belay / naive with a realistic site latency (`--site-latency p50=300,p95=1200`). */
export const WALL_RATIO_TARGET = 1.15;

/** Clean job times of both runners at one speed of the shop. */
export interface CleanJobs {
  /** `own` (the demo shop's speed) or the latency profile, e.g. `p50=300 ms, p95=1200 ms`. */
  speed: string;
  latency: boolean;
  naiveMs: number[];
  belayMs: number[];
}

/** The ratio figures (pure); a speed whose runs are missing gives no figure. */
export function wallRatioFigures(jobs: readonly CleanJobs[]): Figure[] {
  return jobs
    .filter((j) => j.naiveMs.length > 0 && j.belayMs.length > 0)
    .map((j) => {
      const belay = median(j.belayMs);
      const naive = median(j.naiveMs);
      const ratio = naive > 0 ? belay / naive : null;
      const label = `Belay / naive clean job time (${j.latency ? `site latency ${j.speed}` : "shop's own speed"})`;
      return {
        label,
        value: ratio,
        unit: 'x',
        statistic: 'ratio',
        runs: Math.min(j.naiveMs.length, j.belayMs.length),
        note: `Belay ${Math.round(belay)} ms (approval answered at once, the order verified at Finish), naive ${Math.round(naive)} ms`,
        ...(j.latency ? { verdict: atMost(ratio, WALL_RATIO_TARGET, `<= ${WALL_RATIO_TARGET}`) } : {}),
      } satisfies Figure;
    });
}
