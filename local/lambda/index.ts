/**
 * The local Lambda runner: real handlers in child processes, with fault injection.
 */
export * from './errors.ts';
export type * from './events.ts';
export { createLambdaRunner, functionNameOf } from './runner.ts';
export type * from './types.ts';
