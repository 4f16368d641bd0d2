/**
 * M/M/c queueing (Erlang C), shared by the capacity planner (`plan.ts`) and the scale model
 * (`scale.ts`): jobs arrive as a Poisson process, hold a browser for an exponentially
 * distributed time, and are served by c browsers, first come first served (Belay's queue).
 */

/** Queueing at one arrival rate, M/M/c with c = the cap. */
export interface Queueing {
  arrivalsPerMinute: number;
  /** a = lambda x S: the mean number of browsers busy (Erlangs). */
  offeredLoad: number;
  /** a / c. */
  utilization: number;
  stable: boolean;
  /** Probability that a job has to wait for a browser (Erlang C); 1 when unstable. */
  probabilityOfWaiting: number;
  /** Mean wait for a browser in minutes (Wq); null when unstable (it grows without bound). */
  meanWaitMinutes: number | null;
  /** Unstable only: jobs the queue grows by per minute (lambda - c/S). */
  backlogGrowthPerMinute: number;
}

/**
 * Erlang C: the probability that an arriving job waits, with `c` servers and offered load
 * `a` Erlangs (a < c). Computed through the Erlang B recursion, stable for large c.
 *
 * @example
 * erlangC(2, 1.5); // 0.642857... (= 9/14)
 */
export function erlangC(c: number, a: number): number {
  if (!Number.isInteger(c) || c < 1) throw new RangeError('c must be a positive integer');
  if (a < 0) throw new RangeError('a must be >= 0');
  if (a >= c) return 1;
  let b = 1;
  for (let k = 1; k <= c; k++) b = (a * b) / (k + a * b);
  return b / (1 - (a / c) * (1 - b));
}

/** M/M/c queueing at arrival rate `lambda` (per minute), mean service `s` minutes, `c` servers. */
export function queueing(lambda: number, s: number, c: number): Queueing {
  const a = lambda * s;
  const stable = a < c;
  const p = stable ? erlangC(c, a) : 1;
  return {
    arrivalsPerMinute: lambda,
    offeredLoad: a,
    utilization: a / c,
    stable,
    probabilityOfWaiting: p,
    meanWaitMinutes: stable ? (p * s) / (c - a) : null,
    backlogGrowthPerMinute: stable ? 0 : lambda - c / s,
  };
}
