/**
 * Where the CDK app finds the code it deploys. Resolved from this file, not from the
 * working directory, so `cdk synth` and the tests agree wherever they are started.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the esbuild project root of every function. */
export const REPO_ROOT: string = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** The lock file that pins what esbuild bundles. */
export const LOCK_FILE: string = join(REPO_ROOT, 'package-lock.json');

/** The state machine definition, deployed unchanged with `definitionSubstitutions`. */
export const STATE_MACHINE_DEFINITION: string = join(REPO_ROOT, 'statemachine', 'job.asl.json');

/**
 * The entry file of a Lambda handler, by the house layout `lambdas/<name>/handler.ts`.
 *
 * @example
 * handlerEntry('run-step'); // <repo>/lambdas/run-step/handler.ts
 */
export function handlerEntry(name: string): string {
  return join(REPO_ROOT, 'lambdas', name, 'handler.ts');
}
