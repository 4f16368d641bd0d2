/**
 * A task result handed on unchanged by an invocation that did no work of its own: RunNextStep
 * given RunStep's result when that is not `completed` (`lambdas/run-step/next-step.ts`). The
 * handler returns the inner result to the state machine; metering and metrics record the
 * invocation as `relayed`, so the relayed outcome is not counted twice.
 */
export class Relayed<R> {
  constructor(readonly result: R) {}
}

/** The result the state machine gets: a relayed one unwrapped. */
export function unwrapRelayed<R>(value: R | Relayed<R>): R {
  return value instanceof Relayed ? value.result : value;
}
