/**
 * The functions the local stack runs, as the CDK stack deploys them: every task of the state
 * machine, the API and its authorizer, the recovery function, the notifier (tenants' webhooks)
 * and the watchdog, each with its timeout, its environment and its IAM policy from the template.
 */
import { PLAYWRIGHT_RUNTIME_MODULES } from '../lambdas/bundling.ts';
import { BROWSER_ACCESS_VARIABLE } from '../lambdas/lib/browser/secret-key.ts';
import { STATE_MACHINE_FUNCTIONS } from '../lambdas/lib/engine/functions.ts';
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

/**
 * The template's functions the local stack runs, by construct id: the handler directory
 * under `lambdas/` of each (its local name is `belay-<directory>`, as `belay-run-step`).
 */
const HANDLER_DIRS = Object.freeze({
  ...STATE_MACHINE_FUNCTIONS,
  ApiHandler: 'api',
  ApiAuthorizer: 'authorizer',
  RecoverJobs: 'recover',
  // The wait bus's rule sends it `Belay Job Waiting`.
  Notifier: 'notify',
  // Its schedule is in the template.
  Watchdog: 'watchdog',
});

/** A function of the template the local stack runs, by its construct id. */
export type LocalFunction = keyof typeof HANDLER_DIRS;

/** Functions the local API server runs in its own process (`local/api/server.ts`), not the Lambda runner. */
const IN_PROCESS: readonly LocalFunction[] = ['ApiHandler', 'ApiAuthorizer'];

/** The template's functions the local stack runs: construct id -> local function name. */
export const LOCAL_FUNCTIONS: Readonly<Record<LocalFunction, string>> = Object.freeze(
  Object.fromEntries(Object.entries(HANDLER_DIRS).map(([id, dir]) => [id, `belay-${dir}`])) as Record<
    LocalFunction,
    string
  >,
);

/** The ARN the local stack gives a function (the Lambda runner maps it back to its handler). */
export function localFunctionArn(name: LocalFunction): string {
  return functionArn(LOCAL_AWS.REGION, LOCAL_AWS.ACCOUNT, LOCAL_FUNCTIONS[name]);
}

/**
 * The Lambda runner's functions (by local ARN): the machine's tasks, recovery, the notifier
 * and the watchdog, each with the timeout and memory the template gives it, the template's
 * variables the local stack takes (`TemplateWiring.variables`: a function deployed without
 * credentials runs with `BELAY_SECRETS=none`), playwright-core beside the bundle unless it is
 * deployed without browser access, its provisioned workers and its IAM policy.
 */
export function localFunctions(
  wiring: TemplateWiring,
  provisioned: Partial<Record<LocalFunction, number>>,
): Record<string, LambdaFunctionConfig> {
  return Object.fromEntries(
    (Object.keys(HANDLER_DIRS) as LocalFunction[])
      .filter((id) => !IN_PROCESS.includes(id))
      .map((id) => {
        const env = wiring.variables(id);
        return [
          localFunctionArn(id),
          {
            entry: `lambdas/${HANDLER_DIRS[id]}/handler.ts`,
            timeoutMs: wiring.timeoutMs(id),
            memoryMb: wiring.memoryMb(id),
            env,
            runtimeModules: env[BROWSER_ACCESS_VARIABLE] === 'none' ? [] : PLAYWRIGHT_RUNTIME_MODULES,
            provisioned: provisioned[id] ?? 0,
            iam: wiring.spec(id),
          },
        ];
      }),
  );
}
