import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { StepConfigurationError } from '../playbooks/errors.ts';
import { DEFAULT_LOCAL_LATENCY_MS, LocalPolicy } from './local-policy.ts';
import { ModelPolicy, type ModelPolicyOptions } from './model-policy.ts';
import { parseModelSpec } from './model-spec.ts';
import type { Policy } from './policy.ts';

/**
 * Which models a deployment offers its agent steps, and how to reach them. Read once from the
 * environment at cold start (`agentConfigFromEnv`), or given by a test. Provider options are
 * passed explicitly so the SDKs' own environment variables never redirect a call.
 */
export interface AgentModelsConfig {
  /** Model specs the deployment allows (`local` always). A step or job naming another fails. */
  allowed: readonly string[];
  /** Simulated latency of one `local` decision. */
  localLatencyMs: number;
  anthropic?: { apiKey: string; baseURL?: string };
  openai?: { apiKey: string; baseURL?: string; api?: 'responses' | 'chat' };
  /** Bedrock signs with the Lambda role's credentials (SigV4) unless given keys (tests). */
  bedrock?: {
    region: string;
    baseURL?: string;
    credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  };
  call?: ModelPolicyOptions;
}

/**
 * From `BELAY_AGENT_MODELS` (comma-separated specs), `BELAY_AGENT_LOCAL_LATENCY_MS`,
 * `BELAY_AGENT_{ANTHROPIC,OPENAI,BEDROCK}_BASE_URL`, `BELAY_AGENT_ANTHROPIC_API_KEY`,
 * `BELAY_AGENT_OPENAI_API_KEY` (set on the local stack; in AWS read at cold start from the
 * secrets their `*_SECRET_ARN` variables name, see {@link MODEL_KEY_VARIABLES}) and
 * `AWS_REGION` for Bedrock.
 */
/** The provider keys agent steps' models need: variables that may come from a secret (`resolveSecretEnv`). */
export const MODEL_KEY_VARIABLES = Object.freeze([
  'BELAY_AGENT_ANTHROPIC_API_KEY',
  'BELAY_AGENT_OPENAI_API_KEY',
] as const);

export function agentConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AgentModelsConfig {
  const allowed = (env.BELAY_AGENT_MODELS ?? 'local')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const latency = Number(env.BELAY_AGENT_LOCAL_LATENCY_MS ?? DEFAULT_LOCAL_LATENCY_MS);
  const base = (k: string): { baseURL: string } | object => (env[k] ? { baseURL: env[k] as string } : {});
  const config: AgentModelsConfig = {
    allowed,
    localLatencyMs: Number.isFinite(latency) && latency >= 0 ? latency : DEFAULT_LOCAL_LATENCY_MS,
  };
  if (env.BELAY_AGENT_ANTHROPIC_API_KEY)
    config.anthropic = {
      apiKey: env.BELAY_AGENT_ANTHROPIC_API_KEY,
      ...base('BELAY_AGENT_ANTHROPIC_BASE_URL'),
    };
  if (env.BELAY_AGENT_OPENAI_API_KEY)
    config.openai = { apiKey: env.BELAY_AGENT_OPENAI_API_KEY, ...base('BELAY_AGENT_OPENAI_BASE_URL') };
  if (env.AWS_REGION) config.bedrock = { region: env.AWS_REGION, ...base('BELAY_AGENT_BEDROCK_BASE_URL') };
  return config;
}

/** Provider options asking each provider for one tool call at most (checked on the wire). */
const ONE_CALL: Record<string, Record<string, Record<string, boolean>>> = {
  anthropic: { anthropic: { disableParallelToolUse: true } },
  openai: { openai: { parallelToolCalls: false } },
};

/** The policy for a model spec, or a configuration error naming what is missing. */
export function policyFor(spec: string, config: AgentModelsConfig, step: string): Policy {
  const parsed = parseModelSpec(spec);
  if (!parsed) throw new StepConfigurationError(step, `"${spec}" is not a model spec`);
  if (parsed.provider === 'local') return new LocalPolicy({ latencyMs: config.localLatencyMs });
  if (!config.allowed.includes(spec)) {
    throw new StepConfigurationError(
      step,
      `the model ${spec} is not offered by this deployment (BELAY_AGENT_MODELS)`,
    );
  }
  const call = (provider: string): ModelPolicyOptions => {
    const providerOptions = ONE_CALL[provider];
    return { ...config.call, ...(providerOptions ? { providerOptions } : {}) };
  };
  switch (parsed.provider) {
    case 'anthropic': {
      if (!config.anthropic) throw new StepConfigurationError(step, 'no Anthropic key is configured');
      return new ModelPolicy(spec, createAnthropic({ ...config.anthropic })(parsed.id), call('anthropic'));
    }
    case 'openai': {
      if (!config.openai) throw new StepConfigurationError(step, 'no OpenAI key is configured');
      const { api, ...options } = config.openai;
      const provider = createOpenAI(options);
      const model = api === 'chat' ? provider.chat(parsed.id) : provider.responses(parsed.id);
      return new ModelPolicy(spec, model, call('openai'));
    }
    case 'bedrock': {
      if (!config.bedrock) throw new StepConfigurationError(step, 'no AWS region for Bedrock');
      const { credentials, ...options } = config.bedrock;
      const model = createAmazonBedrock({ ...options, ...(credentials ?? {}) })(parsed.id);
      // Claude on Bedrock takes Anthropic's parallel-tool option in additionalModelRequestFields.
      return new ModelPolicy(spec, model, call(parsed.id.includes('anthropic.') ? 'anthropic' : 'bedrock'));
    }
  }
}
