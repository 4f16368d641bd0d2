/**
 * The Step Functions quotas the local runner enforces as AWS does (Standard workflows):
 * payloads, history, the life of an execution name.
 */

/** 256 KiB: the largest state input, state output, task result, execution input or task output. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/** Events in one execution's history; the 25,000th that is not ExecutionSucceeded is ExecutionFailed. */
export const MAX_HISTORY_EVENTS = 25_000;

/** An execution name stays taken for 90 days after its execution closed. */
export const NAME_RETENTION_MS = 90 * 86_400_000;

/** The cause AWS records when the history quota ends an execution (error `States.Runtime`). */
export const HISTORY_LIMIT_CAUSE = `The execution reached the maximum number of history events (${MAX_HISTORY_EVENTS}).`;

/** UTF-8 bytes of a JSON value as Step Functions counts it (its serialized text). */
export function payloadBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');
}
