import middy from '@middy/core';
import { recoverDeps } from './deps.ts';
import { type ExecutionStatusChange, handleRecoveryEvent, type ScheduledEvent } from './recover.ts';

/**
 * Lambda entry point of the recovery function: the EventBridge rule on the job state machine's
 * execution status changes and the scheduled sweep both invoke it; the logic is
 * `handleRecoveryEvent` (pure, takes its dependencies).
 */
export const handler = middy(async (event: ExecutionStatusChange | ScheduledEvent) =>
  handleRecoveryEvent(await recoverDeps(), event),
);
