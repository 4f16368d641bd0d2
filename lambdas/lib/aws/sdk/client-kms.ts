import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/client-kms`, loaded with `require` (see `client-s3.ts`): the API signs
 * receipts only when one is asked for, so a cold start that signs none never loads it.
 */
type Module = typeof import('@aws-sdk/client-kms');

let sdk: Module | undefined;

/** The package, required on first use. */
export function kmsSdk(): Module {
  sdk ??= createRequire(import.meta.url)('@aws-sdk/client-kms') as Module;
  return sdk;
}

export type KMSClient = import('@aws-sdk/client-kms').KMSClient;
