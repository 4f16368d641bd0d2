import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/client-sfn`, loaded with `require`. The AWS SDK is CommonJS (and, in Lambda,
 * the runtime's copy, left out of the bundle): an ESM import of it makes Node lex its files for
 * named exports before it loads them, about twice the CPU of `require`, at every cold start.
 * The handlers import the SDK's values from this folder, and its types from the package.
 */
type Module = typeof import('@aws-sdk/client-sfn');

const sdk = createRequire(import.meta.url)('@aws-sdk/client-sfn') as Module;

export const {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  ListExecutionsCommand,
  SFNClient,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} = sdk;

export type DescribeExecutionCommand = import('@aws-sdk/client-sfn').DescribeExecutionCommand;
export type ExecutionAlreadyExists = import('@aws-sdk/client-sfn').ExecutionAlreadyExists;
export type ExecutionDoesNotExist = import('@aws-sdk/client-sfn').ExecutionDoesNotExist;
export type InvalidToken = import('@aws-sdk/client-sfn').InvalidToken;
export type ListExecutionsCommand = import('@aws-sdk/client-sfn').ListExecutionsCommand;
export type SFNClient = import('@aws-sdk/client-sfn').SFNClient;
export type SendTaskFailureCommand = import('@aws-sdk/client-sfn').SendTaskFailureCommand;
export type SendTaskSuccessCommand = import('@aws-sdk/client-sfn').SendTaskSuccessCommand;
export type StartExecutionCommand = import('@aws-sdk/client-sfn').StartExecutionCommand;
export type StopExecutionCommand = import('@aws-sdk/client-sfn').StopExecutionCommand;
export type TaskDoesNotExist = import('@aws-sdk/client-sfn').TaskDoesNotExist;
export type TaskTimedOut = import('@aws-sdk/client-sfn').TaskTimedOut;
