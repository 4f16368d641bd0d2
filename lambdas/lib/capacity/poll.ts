/**
 * How often a QUEUED job asks for a lease again. Every ask is a Start invocation, an entry in
 * the job's ledger and nine events in its execution's history (which holds 25,000), so a job
 * that has waited long asks less often: every `pollSeconds` for its first ten minutes, every
 * 15 s up to an hour, then every minute. A day in the queue then takes about 1,700 asks
 * (~15,300 history events); `maxQueueSeconds` (default a day) ends the wait before the
 * history is full.
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
