import { maxPollSeconds } from '../lib/capacity/poll.ts';
import { settingsFromEnv } from '../lib/engine/runtime.ts';
import type { StuckAllowance } from './watchdog.ts';

/** A wait may run this long past its expiry before the job counts as stuck (the state machine's timeout fires first). */
const WAIT_GRACE_SECONDS = 300;
/** On top of the queue's own grace: a poll may land a little late on a busy account. */
const QUEUE_SLACK_SECONDS = 60;

/**
 * How long each status may go without progress, from the engine's own settings (the same
 * `BELAY_*` variables as the task functions): a RUNNING job a whole lease TTL, a QUEUED job
 * the queue's grace (three times the longest pause between asks) and a minute.
 */
export function allowanceFromEnv(env: NodeJS.ProcessEnv = process.env): StuckAllowance {
  const settings = settingsFromEnv(env);
  return {
    runningSeconds: settings.leaseTtlSeconds,
    queuedSeconds: 3 * maxPollSeconds(settings.capacityPollSeconds) + QUEUE_SLACK_SECONDS,
    waitGraceSeconds: WAIT_GRACE_SECONDS,
  };
}
