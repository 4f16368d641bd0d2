/**
 * The local Step Functions runner: `createLocalStepFunctions` and its HTTP endpoint.
 */
export { applySubstitutions, INTERPRETER_TIMEOUT_CAP_SECONDS, prepareDefinition } from './definition.ts';
export * from './errors.ts';
export { countStateTransitions } from './history.ts';
export { type LocalSfnServer, startLocalSfnServer } from './http.ts';
export {
  createLocalStepFunctions,
  DEFAULT_TASK_TIMEOUT_SECONDS,
  type LocalStepFunctions,
  type LocalStepFunctionsOptions,
  type StartExecutionResult,
} from './runner.ts';
export type * from './types.ts';
