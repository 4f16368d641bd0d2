/**
 * Execution history: AWS-shaped events recorded per execution, and the state-transition count.
 */
import { MAX_HISTORY_EVENTS } from './limits.ts';
import type { HistoryEvent, HistoryEventType, StateType } from './types.ts';

/** The event details an append may carry (every key of {@link HistoryEvent} but the bookkeeping). */
export type HistoryEventDetails = Omit<
  HistoryEvent,
  'id' | 'previousEventId' | 'timestamp' | 'type' | 'executionArn'
>;

const CLOSING: ReadonlySet<HistoryEventType> = new Set([
  'ExecutionSucceeded',
  'ExecutionFailed',
  'ExecutionAborted',
  'ExecutionTimedOut',
]);

/**
 * Append-only history of one execution, held to AWS's quota: once it has 24,999 events, an
 * event that is not ExecutionSucceeded is not recorded; `onFull` is called instead, and the
 * execution fails with ExecutionFailed as event 25,000. Nothing is recorded after a closing event.
 */
export class ExecutionHistory {
  readonly events: HistoryEvent[] = [];
  private closed = false;

  constructor(
    private readonly executionArn: string,
    private readonly onEvent?: (e: HistoryEvent) => void,
    private readonly onFull?: () => void,
    private readonly maxEvents = MAX_HISTORY_EVENTS,
  ) {}

  /**
   * Appends an event stamped now (or at `timestamp`, ms since the epoch) and reports it.
   * Returns undefined when the event is not recorded (the history is closed, or full).
   */
  append(
    type: HistoryEventType,
    details: HistoryEventDetails = {},
    timestamp?: number,
  ): HistoryEvent | undefined {
    if (this.closed) return undefined;
    if (
      this.events.length === this.maxEvents - 1 &&
      type !== 'ExecutionSucceeded' &&
      type !== 'ExecutionFailed'
    ) {
      this.onFull?.();
      return undefined;
    }
    if (CLOSING.has(type)) this.closed = true;
    const id = this.events.length + 1;
    const event: HistoryEvent = {
      id,
      previousEventId: id - 1,
      timestamp: new Date(timestamp ?? Date.now()),
      type,
      executionArn: this.executionArn,
      ...details,
    };
    this.events.push(event);
    try {
      this.onEvent?.(event);
    } catch (err) {
      // A listener's bug must not break the execution it observes.
      console.error('local Step Functions: onEvent listener threw', err);
    }
    return event;
  }

  /** The last event, if any. */
  last(): HistoryEvent | undefined {
    return this.events[this.events.length - 1];
  }
}

const SCHEDULED: ReadonlySet<HistoryEventType> = new Set(['TaskScheduled', 'LambdaFunctionScheduled']);

/** True for `<Type>StateEntered` events. */
export function isStateEntered(e: HistoryEvent): boolean {
  return e.type.endsWith('StateEntered');
}

/**
 * Counts the state transitions AWS bills for a Standard execution.
 *
 * Rule: every state entered counts one (the `<Type>StateEntered` events, the start state included),
 * and every retry of a Task counts one more (AWS: "including retries"), which the history shows as a
 * second, third, ... `TaskScheduled`/`LambdaFunctionScheduled` event after the same `StateEntered`.
 * Execution start and end events are not transitions.
 *
 * @example
 * // Pass -> Task (killed once, retried) -> Succeed
 * countStateTransitions(history) // 3 entered + 1 retry = 4
 */
export function countStateTransitions(events: readonly HistoryEvent[]): number {
  let transitions = 0;
  let scheduledSinceEntered = 0;
  for (const e of events) {
    if (isStateEntered(e)) {
      transitions++;
      scheduledSinceEntered = 0;
    } else if (SCHEDULED.has(e.type)) {
      if (scheduledSinceEntered > 0) transitions++;
      scheduledSinceEntered++;
    }
  }
  return transitions;
}

/** The `<Type>StateEntered` / `<Type>StateExited` event type for a state type. */
export function stateEventType(stateType: StateType, phase: 'Entered' | 'Exited'): HistoryEventType {
  return `${stateType}State${phase}`;
}
