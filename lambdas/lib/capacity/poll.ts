/**
 * How often a QUEUED job asks for a lease again. Every ask is a Start invocation, an entry in
 * the job's ledger and nine events in its execution's history (which holds 25,000), so a job
 * that has waited long asks less often: every `pollSeconds` for its first ten minutes, every
 * 15 s up to an hour, then every minute. A day in the queue then takes about 1,700 asks
 * (~15,300 history events). How long a job may wait is bounded by the same arithmetic
 * (`maxQueueSecondsFor`): the asks of the longest wait accepted fit in `QUEUE_HISTORY_BUDGET`.
 */
export function pollAfterSeconds(queuedForSeconds: number, pollSeconds: number): number {
  if (queuedForSeconds < 600) return pollSeconds;
  if (queuedForSeconds < 3600) return Math.max(pollSeconds, 15);
  return maxPollSeconds(pollSeconds);
}

/** The longest pause between two asks of a job still waiting. */
export function maxPollSeconds(pollSeconds: number): number {
  return Math.max(pollSeconds, 60);
}

/** History events one ask adds: Start's task (entered, scheduled, started, succeeded, exited), its Choice, the Wait. */
export const EVENTS_PER_ASK = 9;

/** Step Functions' quota of history events per execution. */
export const HISTORY_EVENT_QUOTA = 25_000;

/**
 * Of an execution's 25,000 history events, what one stay in the queue may take; the rest
 * (9,500) is the job's own run: its steps (about five events a state), waits, retries and
 * sign-ins. A job that queues more than once in one execution (after parking) may still fill
 * the history: then its execution fails, and the recovery function resumes the job in a new one.
 */
export const QUEUE_HISTORY_BUDGET = 15_500;

/** How many times a job asks while it waits `seconds` in the queue (its first ask included). */
export function asksWithin(seconds: number, pollSeconds: number): number {
  let asks = 0;
  for (let t = 0; t < seconds; t += pollAfterSeconds(t, pollSeconds)) asks++;
  return asks;
}

/**
 * The longest wait in the queue whose asks fit in `QUEUE_HISTORY_BUDGET` history events, for
 * a poll of `pollSeconds`: the most `BELAY_MAX_QUEUE_SECONDS` may be (about 24 h at the
 * default 5 s poll).
 */
export function maxQueueSecondsFor(pollSeconds: number, budget = QUEUE_HISTORY_BUDGET): number {
  const maxAsks = Math.floor(budget / EVENTS_PER_ASK);
  // A job that waits up to `t` asks at every tick up to `t`, then once more (that ask fails it
  // with `queue-timeout`): `maxAsks` asks in all.
  let t = 0;
  for (let asks = 2; asks < maxAsks; asks++) t += pollAfterSeconds(t, pollSeconds);
  return t;
}
