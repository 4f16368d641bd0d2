/**
 * The state machine's task functions: the `${<Name>FunctionArn}` placeholders of
 * `statemachine/job.asl.json` and the handler directory each one runs. The CDK stack makes
 * one function per entry and substitutes its ARN; the local stack maps the same names to
 * the same handler files.
 */
export const STATE_MACHINE_FUNCTIONS = {
  Start: 'start',
  OpenSession: 'open-session',
  RunStep: 'run-step',
  Reauthenticate: 'reauthenticate',
  Reconcile: 'reconcile',
  AwaitHuman: 'await-human',
  Finish: 'finish',
  RecordFailure: 'record-failure',
} as const;

export type StateMachineFunction = keyof typeof STATE_MACHINE_FUNCTIONS;

/**
 * What a task function is, as plain data: the CDK stack turns it into a `Duration`, memory,
 * bundling and IAM grants (`cdk/engine-functions.ts`); the local Lambda runner into a timeout
 * and the credentials a worker may read. One table, so both run a function alike.
 */
export interface TaskFunctionFacts {
  /** Lambda timeout in seconds; at most the ASL task's `TimeoutSeconds`, so Lambda's own timeout fires first. */
  readonly timeoutSeconds: number;
  /** Drives a browser (playwright-core over CDP, the Anchor API key). */
  readonly browser: boolean;
  /** Reads connected accounts' credentials: it signs in. The others run with `BELAY_SECRETS=none`. */
  readonly readsCredentials: boolean;
}

/**
 * How much longer a task state waits than its Lambda may run. Step Functions retries a task
 * whose state timed out; with this margin the invocation it gave up on has always ended by
 * then (Lambda's own timeout fired first), so two attempts of one step never overlap that way.
 */
export const TASK_TIMEOUT_MARGIN_SECONDS = 30;

export const TASK_FUNCTION_FACTS: Readonly<Record<StateMachineFunction, TaskFunctionFacts>> = Object.freeze({
  Start: { timeoutSeconds: 90, browser: true, readsCredentials: false },
  OpenSession: { timeoutSeconds: 60, browser: true, readsCredentials: false },
  RunStep: { timeoutSeconds: 150, browser: true, readsCredentials: true },
  Reauthenticate: { timeoutSeconds: 100, browser: true, readsCredentials: true },
  Reconcile: { timeoutSeconds: 100, browser: true, readsCredentials: false },
  AwaitHuman: { timeoutSeconds: 60, browser: true, readsCredentials: false },
  Finish: { timeoutSeconds: 150, browser: true, readsCredentials: true },
  RecordFailure: { timeoutSeconds: 60, browser: true, readsCredentials: false },
});

/** The definition substitution key of a function (`RunStep` -> `RunStepFunctionArn`). */
export function substitutionKey(name: StateMachineFunction): string {
  return `${name}FunctionArn`;
}
