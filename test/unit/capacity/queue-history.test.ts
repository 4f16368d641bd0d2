/**
 * The queue's arithmetic and the history quota: a job that waits in the queue as long as
 * BELAY_MAX_QUEUE_SECONDS accepts asks for capacity at most so often that its asks (nine
 * history events each) fit in QUEUE_HISTORY_BUDGET, and the budget leaves the job's own run
 * room in the execution's 25,000 events. A week, which was accepted, would need ~90,000.
 */
import { describe, expect, it } from 'vitest';
import {
  asksWithin,
  EVENTS_PER_ASK,
  HISTORY_EVENT_QUOTA,
  maxQueueSecondsFor,
  pollAfterSeconds,
  QUEUE_HISTORY_BUDGET,
} from '../../../lambdas/lib/capacity/poll.ts';
import { ConfigError } from '../../../lambdas/lib/config.ts';
import { settingsFromEnv } from '../../../lambdas/lib/engine/runtime.ts';

/** History events of a job that waits `seconds` and then fails with queue-timeout (its last ask). */
const eventsOfAWait = (seconds: number, poll: number): number =>
  (asksWithin(seconds + 1, poll) + 1) * EVENTS_PER_ASK;

describe('Function: maxQueueSecondsFor', () => {
  it.each([1, 2, 5, 15, 60, 300])('keeps the longest accepted wait within the budget (poll %i s)', (poll) => {
    const max = maxQueueSecondsFor(poll);
    expect(eventsOfAWait(max, poll)).toBeLessThanOrEqual(QUEUE_HISTORY_BUDGET);
    // And it is the longest: one more interval would not fit.
    expect(eventsOfAWait(max + pollAfterSeconds(max, poll), poll)).toBeGreaterThan(QUEUE_HISTORY_BUDGET);
  });

  it("leaves the job's own run room in the execution's history", () => {
    expect(QUEUE_HISTORY_BUDGET).toBeLessThanOrEqual(HISTORY_EVENT_QUOTA - 9_000);
  });

  it('accepts a day at the default 5 s poll, not a week', () => {
    expect(maxQueueSecondsFor(5)).toBeGreaterThanOrEqual(86_400);
    expect(eventsOfAWait(7 * 86_400, 5)).toBeGreaterThan(HISTORY_EVENT_QUOTA);
  });
});

describe('Function: settingsFromEnv (BELAY_MAX_QUEUE_SECONDS)', () => {
  it('refuses a wait whose asks would not fit in the history, naming the variable and the bound', () => {
    expect(() => settingsFromEnv({ BELAY_MAX_QUEUE_SECONDS: String(7 * 86_400) })).toThrow(ConfigError);
    expect(() => settingsFromEnv({ BELAY_MAX_QUEUE_SECONDS: String(7 * 86_400) })).toThrow(
      new RegExp(`BELAY_MAX_QUEUE_SECONDS: must be <= ${maxQueueSecondsFor(5)}`),
    );
  });

  it('defaults to a day, or to what fits when the poll is short', () => {
    expect(settingsFromEnv({}).maxQueueSeconds).toBe(86_400);
    const fast = settingsFromEnv({ BELAY_CAPACITY_POLL_SECONDS: '1' });
    expect(fast.maxQueueSeconds).toBe(maxQueueSecondsFor(1));
    expect(eventsOfAWait(fast.maxQueueSeconds, 1)).toBeLessThanOrEqual(QUEUE_HISTORY_BUDGET);
  });
});
