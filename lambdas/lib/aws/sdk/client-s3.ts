import { createRequire } from 'node:module';

/**
 * The values of `@aws-sdk/client-s3`, loaded with `require`. The AWS SDK is CommonJS (and, in Lambda,
 * the runtime's copy, left out of the bundle): an ESM import of it makes Node lex its files for
 * named exports before it loads them, about twice the CPU of `require`, at every cold start.
 * The handlers import the SDK's values from this folder, and its types from the package.
 */
type Module = typeof import('@aws-sdk/client-s3');

let sdk: Module | undefined;

/**
 * The package, required on first use: RunStep stores a screenshot only at some steps, so a
 * cold start that takes none never loads it.
 */
export function s3Sdk(): Module {
  sdk ??= createRequire(import.meta.url)('@aws-sdk/client-s3') as Module;
  return sdk;
}

export type GetObjectCommand = import('@aws-sdk/client-s3').GetObjectCommand;
export type NoSuchKey = import('@aws-sdk/client-s3').NoSuchKey;
export type PutObjectCommand = import('@aws-sdk/client-s3').PutObjectCommand;
export type S3Client = import('@aws-sdk/client-s3').S3Client;
