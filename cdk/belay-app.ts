/**
 * Builds the Belay app on an `App`: the one stack, and cdk-nag when the config asks.
 * Kept apart from `app.ts` (which only runs it) so tests build the very same app.
 */
import { type App, type Environment, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readConfig } from './config.ts';
import { BelayStack } from './stacks/belay-stack.ts';

/** The stack's id and CloudFormation name. */
export const STACK_NAME = 'Belay';

/**
 * The deployment environment from the CDK CLI's `CDK_DEFAULT_ACCOUNT`/`CDK_DEFAULT_REGION`;
 * undefined (an environment-agnostic stack) when neither is set, e.g. without credentials.
 */
export function environmentFrom(env: NodeJS.ProcessEnv = process.env): Environment | undefined {
  const account = env.CDK_DEFAULT_ACCOUNT || undefined;
  const region = env.CDK_DEFAULT_REGION || undefined;
  return account || region ? { account, region } : undefined;
}

/** Options of {@link configureApp}. */
export interface ConfigureAppOptions {
  /**
   * Where the stack deploys.
   * @default - environment-agnostic
   */
  readonly env?: Environment;
}

/**
 * Adds the Belay stack to `app`, configured from the app's `belay:*` context, and registers
 * cdk-nag's AwsSolutions pack when `belay:nag` is true (synth then fails on any finding
 * that is not acknowledged with a reason).
 *
 * @param options where to deploy; by default the CLI's environment ({@link environmentFrom})
 * @throws ConfigError when a `belay:*` context value is malformed
 */
export function configureApp(
  app: App,
  { env }: ConfigureAppOptions = { env: environmentFrom() },
): BelayStack {
  const config = readConfig(app);
  const stack = new BelayStack(app, STACK_NAME, {
    env,
    config,
    description: 'Belay: durable long-running browser jobs (checkpoint ledger, handlers, job state machine).',
  });
  if (config.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stack;
}
