/**
 * Execution history: AWS-shaped events recorded per execution, and the state-transition count.
 */
import type { HistoryEvent, HistoryEventType, StateType } from './types.ts';

/** The event details an append may carry (every key of {@link HistoryEvent} but the bookkeeping). */
export type HistoryEventDetails = Omit<
  HistoryEvent,
  'id' | 'previousEventId' | 'timestamp' | 'type' | 'executionArn'
>;

/** Append-only history of one execution. */
export class ExecutionHistory {
  readonly events: HistoryEvent[] = [];

  constructor(
    private readonly executionArn: string,
    private readonly onEvent?: (e: HistoryEvent) => void,
  ) {}

  /** Appends an event stamped now (or at `timestamp`, ms since the epoch) and reports it. */
  append(type: HistoryEventType, details: HistoryEventDetails = {}, timestamp?: number): HistoryEvent {
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
