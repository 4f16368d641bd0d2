/**
 * The agent section's model options (`--agent-model`, `--model-server`), checked before the
 * benchmark starts anything: the environment a stack and the naive agent get for each.
 */
import { describe, expect, it } from 'vitest';
import { agentModelSetup } from '../../../tools/bench/agent.ts';

describe('Function: agentModelSetup', () => {
  it('runs the local policy with nothing added by default', async () => {
    const setup = await agentModelSetup('local', false, {});
    expect(setup).toMatchObject({ model: 'local', env: {} });
    expect(setup.server).toBeUndefined();
  });

  it('passes a hosted model its key from the environment, as a deployment reads it, and nothing else', async () => {
    const setup = await agentModelSetup('openai:gpt-4.1-mini', false, {
      BELAY_AGENT_OPENAI_API_KEY: 'sk-test',
      BELAY_AGENT_ANTHROPIC_API_KEY: 'sk-ant-other',
      HOME: '/root',
    });
    expect(setup.env).toEqual({
      BELAY_AGENT_MODELS: 'openai:gpt-4.1-mini',
      BELAY_AGENT_OPENAI_API_KEY: 'sk-test',
    });
  });

  it('answers an anthropic: model on the loopback provider with --model-server', async () => {
    const setup = await agentModelSetup('anthropic:claude-haiku-4-5', true, {});
    try {
      expect(setup.server?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(setup.env).toEqual({
        BELAY_AGENT_MODELS: 'anthropic:claude-haiku-4-5',
        BELAY_AGENT_ANTHROPIC_API_KEY: 'sk-ant-loopback',
        BELAY_AGENT_ANTHROPIC_BASE_URL: setup.server?.url,
      });
    } finally {
      await setup.server?.close();
    }
  });

  it.each([
    [
      'anthropic:claude-haiku-4-5',
      false,
      /^--agent-model anthropic:claude-haiku-4-5: no Anthropic key is configured$/,
    ],
    [
      'bedrock:amazon.nova-lite-v1:0',
      false,
      /^--agent-model bedrock:amazon.nova-lite-v1:0: no AWS region for Bedrock$/,
    ],
    ['openai:gpt-4.1-mini', true, /--model-server speaks Anthropic's Messages API/],
    ['local', true, /--model-server answers for an anthropic: model/],
    ['gpt-4', false, /"gpt-4" is not a model spec/],
  ])('refuses %s (model server %s) before anything starts', async (model, server, message) => {
    await expect(agentModelSetup(model, server, {})).rejects.toThrow(message);
  });
});
