/**
 * How a model is named in a playbook, a job or the deployment's configuration:
 * `<provider>:<model id>` or `local`. Plain data and a parser, so the API can check a job's
 * `model` without loading any model code.
 */

/** The model providers an agent step can use. `local` is the deterministic rule-based policy. */
export const MODEL_PROVIDERS = ['bedrock', 'anthropic', 'openai', 'local'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** `local`, or a provider and the provider's model id (Bedrock's ids contain `:` and `.`). */
export const MODEL_SPEC_PATTERN =
  /^(?:local|(?:bedrock|anthropic|openai):[A-Za-z0-9][A-Za-z0-9._:/-]{0,180})$/;

export interface ModelSpec {
  /** As written: `bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0`. */
  spec: string;
  provider: ModelProvider;
  /** The provider's model id (`local` for the local policy). */
  id: string;
}

/**
 * Parses a model spec, or returns undefined when it is not one.
 * @example parseModelSpec('anthropic:claude-sonnet-4-5') // { spec, provider: 'anthropic', id: 'claude-sonnet-4-5' }
 */
export function parseModelSpec(spec: string): ModelSpec | undefined {
  if (!MODEL_SPEC_PATTERN.test(spec)) return undefined;
  if (spec === 'local') return { spec, provider: 'local', id: 'local' };
  const at = spec.indexOf(':');
  return { spec, provider: spec.slice(0, at) as ModelProvider, id: spec.slice(at + 1) };
}
