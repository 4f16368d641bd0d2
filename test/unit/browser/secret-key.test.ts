import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { beforeEach, describe, expect, it } from 'vitest';
import { BrowserConfigError } from '../../../lambdas/lib/browser/errors.ts';
import {
  BROWSER_ACCESS_VARIABLE,
  browserAdapterFromDeployedEnv,
  resolveSecretEnv,
  SECRET_ARN_VARIABLES,
} from '../../../lambdas/lib/browser/secret-key.ts';
import { ConfigError } from '../../../lambdas/lib/config.ts';

const KEY_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AnchorApiKey-AbCdEf';
const HOOK_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AnchorWebhookSecret-GhIjKl';

const client = new SecretsManagerClient({ region: 'eu-west-1' });
const sm = mockClient(client);

beforeEach(() => {
  sm.reset();
  sm.on(GetSecretValueCommand, { SecretId: KEY_ARN }).resolves({ SecretString: '  sk-anchor-123\n' });
  sm.on(GetSecretValueCommand, { SecretId: HOOK_ARN }).resolves({ SecretString: 'whsec_a,whsec_b' });
});

describe('Function: resolveSecretEnv', () => {
  it('fills each variable from the secret its *_SECRET_ARN names, trimmed, leaving the input alone', async () => {
    const env = {
      ANCHORBROWSER_API_KEY_SECRET_ARN: KEY_ARN,
      ANCHOR_WEBHOOK_SECRET_ARN: HOOK_ARN,
      OTHER: 'x',
    };
    const resolved = await resolveSecretEnv(env, ['ANCHORBROWSER_API_KEY', 'ANCHOR_WEBHOOK_SECRET'], client);
    expect(resolved).toEqual({
      ...env,
      ANCHORBROWSER_API_KEY: 'sk-anchor-123',
      ANCHOR_WEBHOOK_SECRET: 'whsec_a,whsec_b',
    });
    expect(env).not.toHaveProperty('ANCHORBROWSER_API_KEY');
    expect(sm).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('keeps a variable that is set (the local stack) and makes no call', async () => {
    const env = { ANCHORBROWSER_API_KEY: 'local-key', ANCHORBROWSER_API_KEY_SECRET_ARN: KEY_ARN };
    expect((await resolveSecretEnv(env, ['ANCHORBROWSER_API_KEY'], client)).ANCHORBROWSER_API_KEY).toBe(
      'local-key',
    );
    expect(sm).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
  });

  it('leaves a variable with neither form unset, for its reader to report', async () => {
    const resolved = await resolveSecretEnv({}, ['ANCHORBROWSER_API_KEY'], client);
    expect(resolved.ANCHORBROWSER_API_KEY).toBeUndefined();
    expect(sm).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
  });

  it('names the *_SECRET_ARN variable when the secret cannot be read, and never a value', async () => {
    sm.on(GetSecretValueCommand, { SecretId: KEY_ARN }).rejects(
      new ResourceNotFoundException({ message: 'not found', $metadata: {} }),
    );
    const resolve = resolveSecretEnv(
      { ANCHORBROWSER_API_KEY_SECRET_ARN: KEY_ARN },
      ['ANCHORBROWSER_API_KEY'],
      client,
    );
    await expect(resolve).rejects.toThrow(ConfigError);
    await expect(resolve).rejects.toThrow(
      /^ANCHORBROWSER_API_KEY_SECRET_ARN: could not read the secret: ResourceNotFoundException$/,
    );
  });

  it.each([[{}], [{ SecretString: '   ' }], [{ SecretBinary: new Uint8Array([1]) }]])(
    'refuses a secret without a string value (%j)',
    async (output) => {
      sm.on(GetSecretValueCommand, { SecretId: KEY_ARN }).resolves(output);
      await expect(
        resolveSecretEnv({ ANCHORBROWSER_API_KEY_SECRET_ARN: KEY_ARN }, ['ANCHORBROWSER_API_KEY'], client),
      ).rejects.toThrow(/ANCHORBROWSER_API_KEY_SECRET_ARN: names a secret without a string value/);
    },
  );

  it('uses the variable names the CDK stack sets', () => {
    expect(SECRET_ARN_VARIABLES).toEqual({
      ANCHORBROWSER_API_KEY: 'ANCHORBROWSER_API_KEY_SECRET_ARN',
      ANCHOR_WEBHOOK_SECRET: 'ANCHOR_WEBHOOK_SECRET_ARN',
      BELAY_WEBHOOK_SIGNING_KEY: 'BELAY_WEBHOOK_SIGNING_KEY_SECRET_ARN',
      BELAY_AGENT_ANTHROPIC_API_KEY: 'BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN',
      BELAY_AGENT_OPENAI_API_KEY: 'BELAY_AGENT_OPENAI_API_KEY_SECRET_ARN',
    });
    expect(BROWSER_ACCESS_VARIABLE).toBe('BELAY_BROWSER_ACCESS');
  });
});

describe('Function: browserAdapterFromDeployedEnv', () => {
  it('builds the adapter with the key read from its secret', async () => {
    const adapter = await browserAdapterFromDeployedEnv(
      { ANCHORBROWSER_API_KEY_SECRET_ARN: KEY_ARN },
      client,
    );
    expect(typeof adapter.attach).toBe('function');
    expect(sm).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: KEY_ARN });
  });

  it('fails at cold start on a browser function without a key', async () => {
    await expect(browserAdapterFromDeployedEnv({}, client)).rejects.toThrow(
      /ANCHORBROWSER_API_KEY is not set/,
    );
  });

  it('gives a function deployed without browser access an adapter that refuses every call', async () => {
    const adapter = await browserAdapterFromDeployedEnv({ [BROWSER_ACCESS_VARIABLE]: 'none' }, client);
    for (const call of [
      () => adapter.openSession({ idleTimeoutMinutes: 1, maxDurationMinutes: 1 }),
      () => adapter.attach('s-1', { allowedDomains: [] }),
      () => adapter.detach('s-1'),
      () => adapter.endSession('s-1'),
      () => adapter.isAlive('s-1'),
    ]) {
      await expect(call()).rejects.toThrow(BrowserConfigError);
    }
    expect(sm).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
  });
});
