import { StepConfigurationError } from '../playbooks/errors.ts';
import type { AnthropicOptions, BedrockOptions, HostedModel, OpenAiOptions } from './hosted.ts';
import { DEFAULT_LOCAL_LATENCY_MS, LocalPolicy } from './local-policy.ts';
import type { ModelPolicyOptions } from './model-policy.ts';
import { parseModelSpec } from './model-spec.ts';
import type { Policy, ProbeObservation } from './policy.ts';

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
  anthropic?: AnthropicOptions;
  openai?: OpenAiOptions;
  /** Bedrock signs with the Lambda role's credentials (SigV4) unless given keys (tests). */
  bedrock?: BedrockOptions;
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

/**
 * The policy for a model spec, or a configuration error naming what is missing (thrown here,
 * before any page is touched). A hosted model's SDK (the AI SDK and its provider) is loaded
 * at its first decision, so a handler that runs no hosted model never loads it.
 */
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
  let hosted: HostedModel;
  switch (parsed.provider) {
    case 'anthropic':
      if (!config.anthropic) throw new StepConfigurationError(step, 'no Anthropic key is configured');
      hosted = { provider: 'anthropic', id: parsed.id, options: config.anthropic };
      break;
    case 'openai':
      if (!config.openai) throw new StepConfigurationError(step, 'no OpenAI key is configured');
      hosted = { provider: 'openai', id: parsed.id, options: config.openai };
      break;
    case 'bedrock':
      if (!config.bedrock) throw new StepConfigurationError(step, 'no AWS region for Bedrock');
      hosted = { provider: 'bedrock', id: parsed.id, options: config.bedrock };
      break;
  }
  return new DeferredPolicy(spec, async () =>
    (await import('./hosted.ts')).hostedPolicy(spec, hosted, config.call),
  );
}

/** A hosted model's policy, made (and its SDK loaded) at its first use, then reused. */
class DeferredPolicy implements Policy {
  #policy: Promise<Policy> | undefined;
  constructor(
    readonly spec: string,
    private readonly load: () => Promise<Policy>,
  ) {}
  #get(): Promise<Policy> {
    this.#policy ??= this.load().catch((err: unknown) => {
      this.#policy = undefined;
      throw err;
    });
    return this.#policy;
  }
  async decide(observation: Parameters<Policy['decide']>[0]): ReturnType<Policy['decide']> {
    return (await this.#get()).decide(observation);
  }
  async answerProbe(observation: ProbeObservation): ReturnType<Policy['answerProbe']> {
    return (await this.#get()).answerProbe(observation);
  }
}
