import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/lib-dynamodb`, loaded with `require`. The AWS SDK is CommonJS (and, in Lambda,
 * the runtime's copy, left out of the bundle): an ESM import of it makes Node lex its files for
 * named exports before it loads them, about twice the CPU of `require`, at every cold start.
 * The handlers import the SDK's values from this folder, and its types from the package.
 */
type Module = typeof import('@aws-sdk/lib-dynamodb');

const sdk = createRequire(import.meta.url)('@aws-sdk/lib-dynamodb') as Module;

export const {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} = sdk;

export type DeleteCommand = import('@aws-sdk/lib-dynamodb').DeleteCommand;
export type DynamoDBDocumentClient = import('@aws-sdk/lib-dynamodb').DynamoDBDocumentClient;
export type GetCommand = import('@aws-sdk/lib-dynamodb').GetCommand;
export type PutCommand = import('@aws-sdk/lib-dynamodb').PutCommand;
export type QueryCommand = import('@aws-sdk/lib-dynamodb').QueryCommand;
export type TransactWriteCommand = import('@aws-sdk/lib-dynamodb').TransactWriteCommand;
export type UpdateCommand = import('@aws-sdk/lib-dynamodb').UpdateCommand;
