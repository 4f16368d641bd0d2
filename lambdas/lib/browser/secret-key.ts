/**
 * Secret settings in AWS: a function is given the ARN of a Secrets Manager secret instead of
 * the secret itself (`ANCHORBROWSER_API_KEY_SECRET_ARN` instead of `ANCHORBROWSER_API_KEY`),
 * so the value never sits in the function's configuration, the template or the console. It is
 * read once, at cold start. Locally the plain variable is still set and no call is made.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetSecretValueCommand } from '../aws/sdk/client-secrets-manager.ts';
import { secretsManagerClient } from '../aws/secrets-manager.ts';
import { ConfigError } from '../config.ts';
import { browserAdapterFromEnv } from './adapter.ts';
import { BrowserConfigError } from './errors.ts';
import type { BrowserAdapter } from './types.ts';

/** Each secret variable and the variable that may name its secret instead. The CDK stack uses the same names. */
export const SECRET_ARN_VARIABLES = Object.freeze({
  /** Anchor's API key (the browser adapter). */
  ANCHORBROWSER_API_KEY: 'ANCHORBROWSER_API_KEY_SECRET_ARN',
  /** Anchor's webhook signing secret(s), comma-separated while rotating (the API). */
  ANCHOR_WEBHOOK_SECRET: 'ANCHOR_WEBHOOK_SECRET_ARN',
  /** The key tenants' outgoing webhook secrets are derived from (the API shows them, the notifier signs). */
  BELAY_WEBHOOK_SIGNING_KEY: 'BELAY_WEBHOOK_SIGNING_KEY_SECRET_ARN',
  /** Anthropic's API key, for agent steps on `anthropic:` models (RunStep only). */
  BELAY_AGENT_ANTHROPIC_API_KEY: 'BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN',
  /** OpenAI's API key, for agent steps on `openai:` models (RunStep only). */
  BELAY_AGENT_OPENAI_API_KEY: 'BELAY_AGENT_OPENAI_API_KEY_SECRET_ARN',
} as const);

/** A variable that may come from a secret. */
export type SecretVariable = keyof typeof SECRET_ARN_VARIABLES;

/**
 * Set to `none` on a function that never drives a browser (the API authorizer, and engine
 * functions without browser access): it gets no Anchor key and no right to read one.
 */
export const BROWSER_ACCESS_VARIABLE = 'BELAY_BROWSER_ACCESS';

/** What reads a secret: a Secrets Manager client, or a stand-in in tests. */
export type SecretReader = Pick<SecretsManagerClient, 'send'>;

/**
 * A copy of `env` in which each of `names` that is unset is filled from the secret its
 * `*_SECRET_ARN` variable names (the secret's string, trimmed). A set variable wins, so the
 * local stack works unchanged; a name with neither is left unset for its reader to report.
 *
 * @throws ConfigError naming the `*_SECRET_ARN` variable when the secret cannot be read or is empty
 * @example
 * const resolved = await resolveSecretEnv(process.env, ['ANCHORBROWSER_API_KEY']);
 * const browser = browserAdapterFromEnv(resolved);
 */
export async function resolveSecretEnv(
  env: NodeJS.ProcessEnv,
  names: readonly SecretVariable[],
  reader: SecretReader = defaultReader(),
): Promise<NodeJS.ProcessEnv> {
  const out: NodeJS.ProcessEnv = { ...env };
  await Promise.all(
    names.map(async (name) => {
      if (env[name]?.trim()) return;
      const arnVariable = SECRET_ARN_VARIABLES[name];
      const secretId = env[arnVariable]?.trim();
      if (!secretId) return;
      let value: string | undefined;
      try {
        const res = await reader.send(new GetSecretValueCommand({ SecretId: secretId }));
        value = res.SecretString?.trim();
      } catch (cause) {
        // The SDK's message names the secret and the reason (AccessDenied, not found); never the value.
        throw new ConfigError(arnVariable, `could not read the secret: ${(cause as Error).name}`, { cause });
      }
      if (!value) throw new ConfigError(arnVariable, 'names a secret without a string value');
      out[name] = value;
    }),
  );
  return out;
}

/**
 * The browser adapter of a deployed function: the Anchor key from `ANCHORBROWSER_API_KEY`
 * or, in AWS, from the secret `ANCHORBROWSER_API_KEY_SECRET_ARN` names. A function deployed
 * with `BELAY_BROWSER_ACCESS=none` gets an adapter that refuses every call with
 * `BrowserConfigError` (so its code path to a browser is a loud bug, not a silent one).
 * Call once, at cold start.
 *
 * @throws BrowserConfigError when the key is missing on a function with browser access
 */
export async function browserAdapterFromDeployedEnv(
  env: NodeJS.ProcessEnv = process.env,
  reader?: SecretReader,
): Promise<BrowserAdapter> {
  const resolved = await resolveSecretEnv(env, ['ANCHORBROWSER_API_KEY'], reader);
  if (!resolved.ANCHORBROWSER_API_KEY?.trim() && env[BROWSER_ACCESS_VARIABLE] === 'none') {
    return noBrowserAccess();
  }
  return browserAdapterFromEnv(resolved);
}

function noBrowserAccess(): BrowserAdapter {
  const refuse = async (): Promise<never> => {
    throw new BrowserConfigError(
      `this function is deployed without browser access (${BROWSER_ACCESS_VARIABLE}=none)`,
      { variable: BROWSER_ACCESS_VARIABLE },
    );
  };
  return {
    openSession: refuse,
    attach: refuse,
    detach: refuse,
    endSession: refuse,
    isAlive: refuse,
    usage: refuse,
    runningSessions: refuse,
    liveViewLink: () => undefined,
    revokeLiveViews: async () => undefined,
    volumes: { ensure: refuse, listFiles: refuse, readFile: refuse, writeFile: refuse },
  };
}

function defaultReader(): SecretReader {
  return secretsManagerClient();
}
