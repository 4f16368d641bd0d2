/**
 * The hosted models (Anthropic, OpenAI, Bedrock) through the AI SDK: loaded only when an agent
 * step's first decision needs one (`models.ts` imports this module dynamically), so handlers
 * and steps that run no hosted model never load the SDK.
 */
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { ModelPolicy, type ModelPolicyOptions } from './model-policy.ts';
import type { Policy } from './policy.ts';

/** How to reach each provider (`AgentModelsConfig`'s provider fields). */
export interface AnthropicOptions {
  apiKey: string;
  baseURL?: string;
}
export interface OpenAiOptions {
  apiKey: string;
  baseURL?: string;
  api?: 'responses' | 'chat';
}
/** Bedrock signs with the Lambda role's credentials (SigV4) unless given keys (tests). */
export interface BedrockOptions {
  region: string;
  baseURL?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** A hosted model as configured: its provider, its id there and how to reach it. */
export type HostedModel =
  | { provider: 'anthropic'; id: string; options: AnthropicOptions }
  | { provider: 'openai'; id: string; options: OpenAiOptions }
  | { provider: 'bedrock'; id: string; options: BedrockOptions };

/** Provider options asking each provider for one tool call at most (checked on the wire). */
const ONE_CALL: Record<string, Record<string, Record<string, boolean>>> = {
  anthropic: { anthropic: { disableParallelToolUse: true } },
  openai: { openai: { parallelToolCalls: false } },
};

/** The policy deciding with `model`. */
export function hostedPolicy(spec: string, model: HostedModel, base: ModelPolicyOptions = {}): Policy {
  const call = (provider: string): ModelPolicyOptions => {
    const providerOptions = ONE_CALL[provider];
    return { ...base, ...(providerOptions ? { providerOptions } : {}) };
  };
  switch (model.provider) {
    case 'anthropic':
      return new ModelPolicy(spec, createAnthropic({ ...model.options })(model.id), call('anthropic'));
    case 'openai': {
      const { api, ...options } = model.options;
      const provider = createOpenAI(options);
      const lm = api === 'chat' ? provider.chat(model.id) : provider.responses(model.id);
      return new ModelPolicy(spec, lm, call('openai'));
    }
    case 'bedrock': {
      const { credentials, ...options } = model.options;
      const lm = createAmazonBedrock({ ...options, ...(credentials ?? {}) })(model.id);
      // Claude on Bedrock takes Anthropic's parallel-tool option in additionalModelRequestFields.
      return new ModelPolicy(spec, lm, call(model.id.includes('anthropic.') ? 'anthropic' : 'bedrock'));
    }
  }
}
