/**
 * Agent steps' provider keys at RunStep's cold start: in AWS each is read from the secret its
 * `*_SECRET_ARN` variable names (RunStep alone is bound to them); a key that is set wins.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { agentConfigFromEnv } from '../../../lambdas/lib/agent/models.ts';
import { configureAgentModels, policyForStep } from '../../../lambdas/lib/agent/registry.ts';
import { ConfigError } from '../../../lambdas/lib/config.ts';
import { configureModelKeysFromEnv } from '../../../lambdas/lib/engine/runtime.ts';

const SPEC = 'anthropic:claude-haiku-4-5';
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:AnthropicApiKey-abc123';

function reader(answer: () => Promise<{ SecretString?: string }>) {
  return { send: vi.fn(async (_command: GetSecretValueCommand) => answer()) };
}

afterEach(() => configureAgentModels({ allowed: ['local'], localLatencyMs: 0 }));

describe('Function: configureModelKeysFromEnv', () => {
  it("reads the Anthropic key from its secret, so the deployment's Anthropic model can be used", async () => {
    const env = { BELAY_AGENT_MODELS: SPEC, BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN: ARN };
    // Without the secret read, the model has no key.
    configureAgentModels(agentConfigFromEnv(env));
    expect(() => policyForStep(SPEC, 'update-contact')).toThrow(/no Anthropic key is configured/);

    const secrets = reader(async () => ({ SecretString: ' sk-ant-test-key \n' }));
    expect(await configureModelKeysFromEnv(env, secrets)).toBe(true);
    expect(secrets.send).toHaveBeenCalledTimes(1);
    const command = secrets.send.mock.calls[0]?.[0];
    expect(command).toBeInstanceOf(GetSecretValueCommand);
    expect(command?.input).toEqual({ SecretId: ARN });
    expect(policyForStep(SPEC, 'update-contact')).toBeDefined();
  });

  it('keeps a key that is set (the local stack) and reads no secret', async () => {
    const secrets = reader(async () => ({ SecretString: 'never' }));
    const env = {
      BELAY_AGENT_MODELS: SPEC,
      BELAY_AGENT_ANTHROPIC_API_KEY: 'sk-local',
      BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN: ARN,
    };
    expect(await configureModelKeysFromEnv(env, secrets)).toBe(false);
    expect(secrets.send).not.toHaveBeenCalled();
  });

  it('fails the cold start naming the variable, never a value, when the secret cannot be read', async () => {
    const denied = Object.assign(
      new Error('User is not authorized to perform secretsmanager:GetSecretValue'),
      {
        name: 'AccessDeniedException',
      },
    );
    const secrets = reader(async () => Promise.reject(denied));
    const env = { BELAY_AGENT_MODELS: SPEC, BELAY_AGENT_OPENAI_API_KEY_SECRET_ARN: ARN };
    const err = await configureModelKeysFromEnv(env, secrets).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String((err as Error).message)).toContain('BELAY_AGENT_OPENAI_API_KEY_SECRET_ARN');
    expect(String((err as Error).message)).toContain('AccessDeniedException');
  });
});
