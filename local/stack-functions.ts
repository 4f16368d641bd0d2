/**
 * The functions the local stack runs, as the CDK stack deploys them: every task of the state
 * machine, the API and its authorizer, the recovery function, the notifier (tenants' webhooks)
 * and the watchdog, each with its timeout, its environment and its IAM policy from the template.
 */
import {
  STATE_MACHINE_FUNCTIONS,
  type StateMachineFunction,
  TASK_FUNCTION_FACTS,
} from '../lambdas/lib/engine/functions.ts';
import { functionArn } from './iam/binding.ts';
import type { LambdaFunctionConfig } from './lambda/index.ts';
import type { TemplateWiring } from './template-wiring.ts';

export const LOCAL_TABLE = 'belay-local';

/** Where the local stack's AWS resources are: one region, one account, one stack, one machine. */
export const LOCAL_AWS = Object.freeze({
  REGION: 'us-east-1',
  ACCOUNT: '000000000000',
  STACK_NAME: 'Belay',
  STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:belay-local',
});

/** The recovery function's local name (`lambdas/recover/`). */
export const RECOVERY_FUNCTION = 'belay-recover';
/** The notifier's local name (`lambdas/notify/`): the wait bus's rule sends it `Belay Job Waiting`. */
export const NOTIFY_FUNCTION = 'belay-notify';
/** The watchdog's local name (`lambdas/watchdog/`): its schedule is in the template. */
export const WATCHDOG_FUNCTION = 'belay-watchdog';

/** The local name of a state machine function (`belay-run-step`). */
function localFunctionName(name: StateMachineFunction): string {
  return `belay-${STATE_MACHINE_FUNCTIONS[name]}`;
}

/** The ARN the local stack gives a state machine function (the runner maps it back to its handler). */
export function localFunctionArn(name: StateMachineFunction): string {
  return functionArn(LOCAL_AWS.REGION, LOCAL_AWS.ACCOUNT, localFunctionName(name));
}

/** The template's functions the local stack runs: construct id -> local function name. */
export const LOCAL_FUNCTIONS: Readonly<Record<string, string>> = Object.freeze({
  ...Object.fromEntries(
    (Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]).map((n) => [n, localFunctionName(n)]),
  ),
  ApiHandler: 'belay-api',
  ApiAuthorizer: 'belay-authorizer',
  RecoverJobs: RECOVERY_FUNCTION,
  Notifier: NOTIFY_FUNCTION,
  Watchdog: WATCHDOG_FUNCTION,
});

/** The Lambda runner's functions (by local ARN): the machine's tasks, recovery, the notifier and the watchdog. */
export function localFunctions(
  wiring: TemplateWiring,
  provisioned: Partial<Record<StateMachineFunction, number>>,
): Record<string, LambdaFunctionConfig> {
  const functions: Record<string, LambdaFunctionConfig> = Object.fromEntries(
    (Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]).map((name) => [
      localFunctionArn(name),
      {
        entry: `lambdas/${STATE_MACHINE_FUNCTIONS[name]}/handler.ts`,
        // As the CDK stack deploys it: its timeout, and credentials only where it signs in.
        timeoutMs: TASK_FUNCTION_FACTS[name].timeoutSeconds * 1000,
        env: {
          ...(TASK_FUNCTION_FACTS[name].readsCredentials ? {} : { BELAY_SECRETS: 'none' }),
          ...wiring.variables(name),
        },
        provisioned: provisioned[name] ?? 0,
        iam: wiring.spec(name),
      },
    ]),
  );
  functions[functionArn(LOCAL_AWS.REGION, LOCAL_AWS.ACCOUNT, RECOVERY_FUNCTION)] = {
    entry: 'lambdas/recover/handler.ts',
    // As deployed (`belay-stack.ts`): five minutes, no credentials.
    timeoutMs: 300_000,
    env: { BELAY_SECRETS: 'none', ...wiring.variables('RecoverJobs') },
    iam: wiring.spec('RecoverJobs'),
  };
  // As deployed: 90 s and 120 s (`belay-stack.ts`); the notifier reads only the signing key.
  functions[functionArn(LOCAL_AWS.REGION, LOCAL_AWS.ACCOUNT, NOTIFY_FUNCTION)] = {
    entry: 'lambdas/notify/handler.ts',
    timeoutMs: 90_000,
    env: { BELAY_SECRETS: 'none', ...wiring.variables('Notifier') },
    iam: wiring.spec('Notifier'),
  };
  functions[functionArn(LOCAL_AWS.REGION, LOCAL_AWS.ACCOUNT, WATCHDOG_FUNCTION)] = {
    entry: 'lambdas/watchdog/handler.ts',
    timeoutMs: 120_000,
    env: { BELAY_SECRETS: 'none', ...wiring.variables('Watchdog') },
    iam: wiring.spec('Watchdog'),
  };
  return functions;
}
