/**
 * Binding functions to secrets, in the manner of `bind.ts`: one call sets the variable that
 * names the secret (or the store) and grants exactly the access that implies.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { BindingError } from '../errors.ts';
import { acknowledgeWildcardResource } from '../nag.ts';
import { checkActions, checkEnvName } from './bind.ts';

/** A Secrets Manager IAM action, e.g. `secretsmanager:GetSecretValue`. */
export type SecretsManagerAction = `secretsmanager:${string}`;

/** Read a secret's value. */
export const SECRET_READ = Object.freeze(['secretsmanager:GetSecretValue'] as const);

/** Manage secrets under a prefix: read, create, write and delete (connected accounts' credentials). */
export const SECRET_MANAGE = Object.freeze([
  'secretsmanager:GetSecretValue',
  'secretsmanager:PutSecretValue',
  'secretsmanager:CreateSecret',
  'secretsmanager:DeleteSecret',
] as const);

/** Options of {@link bindSecret}. */
export interface BindSecretOptions {
  /** The environment variable that receives the secret's ARN, e.g. `ANCHORBROWSER_API_KEY_SECRET_ARN`. */
  readonly env: string;
}

/** Options of {@link bindSecretStore}. */
export interface BindSecretStoreOptions {
  /** The environment variable that names the store, e.g. `BELAY_SECRETS`. */
  readonly env: string;
  /** The name prefix of the store's secrets (`<prefix>/<tenant>/<account>`); no wildcards. */
  readonly prefix: string;
  /**
   * Exactly the actions to allow on secrets under the prefix; empty when the function only
   * needs the store named (its code builds the store at cold start but never calls it).
   * See {@link SECRET_READ}, {@link SECRET_MANAGE}.
   */
  readonly actions: readonly SecretsManagerAction[];
}

/**
 * Sets `options.env` to the secret's ARN and allows `secretsmanager:GetSecretValue` on that
 * secret only (and decrypting with its key, when it has a customer managed one). The value
 * never enters the template or the function's configuration; the function reads it at cold start.
 *
 * @example
 * bindSecret(openSession, anchorApiKey, { env: 'ANCHORBROWSER_API_KEY_SECRET_ARN' });
 * @throws BindingError for an invalid variable name
 */
export function bindSecret(fn: LambdaFunction, secret: ISecret, options: BindSecretOptions): iam.Grant {
  fn.addEnvironment(checkEnvName(fn, options.env), secret.secretArn);
  const grant = iam.Grant.addToPrincipal({
    grantee: fn,
    actions: [...SECRET_READ],
    resourceArns: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
  });
  secret.encryptionKey?.grantDecrypt(fn);
  return grant;
}

/**
 * Sets `options.env` to `secretsmanager:<prefix>` (the form `BELAY_SECRETS` takes) and
 * allows exactly `options.actions` on the secrets named `<prefix>/*` in this account and region.
 *
 * @example
 * bindSecretStore(runStep, { env: 'BELAY_SECRETS', prefix: 'belay', actions: SECRET_READ });
 * @throws BindingError for an invalid variable name or prefix, or a wildcard action
 */
export function bindSecretStore(fn: LambdaFunction, options: BindSecretStoreOptions): iam.Grant | undefined {
  if (!/^[A-Za-z0-9_+=.@-]+(\/[A-Za-z0-9_+=.@-]+)*$/.test(options.prefix)) {
    throw new BindingError(fn.node.path, `'${options.prefix}' is not a secret name prefix (no wildcards)`);
  }
  fn.addEnvironment(checkEnvName(fn, options.env), `secretsmanager:${options.prefix}`);
  if (options.actions.length === 0) return undefined;
  const actions = checkActions(fn, 'secretsmanager', options.actions);
  const secrets = Stack.of(fn).formatArn({
    service: 'secretsmanager',
    resource: 'secret',
    resourceName: `${options.prefix}/*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
  const grant = iam.Grant.addToPrincipal({ grantee: fn, actions, resourceArns: [secrets] });
  acknowledgeWildcardResource(
    fn.role ?? fn,
    secrets,
    `Connected accounts' credentials, one secret per account named ${options.prefix}/<tenant>/<account> ` +
      `and created at run time: the listed actions only (${actions.join(', ')}), on that prefix only.`,
  );
  return grant;
}
