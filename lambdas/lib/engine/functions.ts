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

/** The definition substitution key of a function (`RunStep` -> `RunStepFunctionArn`). */
export function substitutionKey(name: StateMachineFunction): string {
  return `${name}FunctionArn`;
}
