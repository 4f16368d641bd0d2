import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/client-secrets-manager`, loaded with `require`. The AWS SDK is CommonJS (and, in Lambda,
 * the runtime's copy, left out of the bundle): an ESM import of it makes Node lex its files for
 * named exports before it loads them, about twice the CPU of `require`, at every cold start.
 * The handlers import the SDK's values from this folder, and its types from the package.
 */
type Module = typeof import('@aws-sdk/client-secrets-manager');

const sdk = createRequire(import.meta.url)('@aws-sdk/client-secrets-manager') as Module;

export const {
  CreateSecretCommand,
  DeleteSecretCommand,
  GetSecretValueCommand,
  InvalidRequestException,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} = sdk;

export type CreateSecretCommand = import('@aws-sdk/client-secrets-manager').CreateSecretCommand;
export type DeleteSecretCommand = import('@aws-sdk/client-secrets-manager').DeleteSecretCommand;
export type GetSecretValueCommand = import('@aws-sdk/client-secrets-manager').GetSecretValueCommand;
export type InvalidRequestException = import('@aws-sdk/client-secrets-manager').InvalidRequestException;
export type PutSecretValueCommand = import('@aws-sdk/client-secrets-manager').PutSecretValueCommand;
export type ResourceNotFoundException = import('@aws-sdk/client-secrets-manager').ResourceNotFoundException;
export type SecretsManagerClient = import('@aws-sdk/client-secrets-manager').SecretsManagerClient;
