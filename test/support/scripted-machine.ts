/**
 * The job machine's real ASL in the local Step Functions runner, with every task function
 * scripted by the test (no Lambda, no ledger): for tests of the machine's own routing, retries
 * and catches.
 */
import { readFileSync } from 'node:fs';
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  substitutionKey,
} from '../../lambdas/lib/engine/functions.ts';
import { createLocalStepFunctions, type LocalStepFunctions } from '../../local/sfn/runner.ts';

const ASL = readFileSync(new URL('../../statemachine/job.asl.json', import.meta.url), 'utf8');
const FUNCTIONS = Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[];
const arnOf = (fn: StateMachineFunction): string => `arn:aws:lambda:us-east-1:000000000000:function:${fn}`;

/** Start's answer for a job that may run at once, in a live session for its one step. */
export const READY = Object.freeze({
  outcome: 'ready',
  parkAfterSeconds: 900,
  app: 'shop',
  sessionId: 's',
  session: 'opened',
  nextStep: 0,
  stepCount: 1,
});

/** An error named as a handler's (what the machine's Retry and Catch match). */
export const named = (name: string): Error => Object.assign(new Error(`${name} (scripted)`), { name });

/**
 * A local runner of the job machine whose task invocations `answer` scripts, by function.
 * `retryIntervalMs` shortens every retry's pause; without it the ASL's own intervals apply.
 */
export function scriptedMachine(
  answer: (fn: StateMachineFunction, payload: unknown) => Promise<unknown>,
  options: { retryIntervalMs?: number } = {},
): LocalStepFunctions {
  return createLocalStepFunctions({
    definition: ASL,
    substitutions: Object.fromEntries(FUNCTIONS.map((n) => [substitutionKey(n), arnOf(n)])),
    ...(options.retryIntervalMs === undefined ? {} : { retryIntervalMs: options.retryIntervalMs }),
    invoke: async (arn, payload) =>
      answer(FUNCTIONS.find((n) => arnOf(n) === arn) as StateMachineFunction, payload),
  });
}
