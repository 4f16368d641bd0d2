import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/client-dynamodb`, loaded with `require`. The AWS SDK is CommonJS (and, in Lambda,
 * the runtime's copy, left out of the bundle): an ESM import of it makes Node lex its files for
 * named exports before it loads them, about twice the CPU of `require`, at every cold start.
 * The handlers import the SDK's values from this folder, and its types from the package.
 */
type Module = typeof import('@aws-sdk/client-dynamodb');

const sdk = createRequire(import.meta.url)('@aws-sdk/client-dynamodb') as Module;

export const {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  ResourceInUseException,
  TransactionCanceledException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} = sdk;

export type ConditionalCheckFailedException =
  import('@aws-sdk/client-dynamodb').ConditionalCheckFailedException;
export type CreateTableCommand = import('@aws-sdk/client-dynamodb').CreateTableCommand;
export type DescribeTableCommand = import('@aws-sdk/client-dynamodb').DescribeTableCommand;
export type DynamoDBClient = import('@aws-sdk/client-dynamodb').DynamoDBClient;
export type ProvisionedThroughputExceededException =
  import('@aws-sdk/client-dynamodb').ProvisionedThroughputExceededException;
export type ResourceInUseException = import('@aws-sdk/client-dynamodb').ResourceInUseException;
export type TransactionCanceledException = import('@aws-sdk/client-dynamodb').TransactionCanceledException;
export type UpdateTableCommand = import('@aws-sdk/client-dynamodb').UpdateTableCommand;
export type UpdateTimeToLiveCommand = import('@aws-sdk/client-dynamodb').UpdateTimeToLiveCommand;
