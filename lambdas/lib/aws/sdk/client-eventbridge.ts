import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/client-eventbridge`, loaded with `require`. The AWS SDK is CommonJS (and, in Lambda,
 * the runtime's copy, left out of the bundle): an ESM import of it makes Node lex its files for
 * named exports before it loads them, about twice the CPU of `require`, at every cold start.
 * The handlers import the SDK's values from this folder, and its types from the package.
 */
type Module = typeof import('@aws-sdk/client-eventbridge');

let sdk: Module | undefined;

/** The package, required on first use: only a step that asks a person tells EventBridge. */
export function eventBridgeSdk(): Module {
  sdk ??= createRequire(import.meta.url)('@aws-sdk/client-eventbridge') as Module;
  return sdk;
}

export type EventBridgeClient = import('@aws-sdk/client-eventbridge').EventBridgeClient;
export type PutEventsCommand = import('@aws-sdk/client-eventbridge').PutEventsCommand;
