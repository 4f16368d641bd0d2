import { type AgentModelsConfig, agentConfigFromEnv, policyFor } from './models.ts';
import type { Policy } from './policy.ts';

/**
 * Where agent steps get their policy: the deployment's models, configured once per process
 * (from the environment at first use, or by `configureAgentModels`). One policy per model spec
 * is kept for the process, so its clients are reused across steps.
 */

let config: AgentModelsConfig | undefined;
let factory: ((spec: string, step: string) => Policy) | undefined;
const policies = new Map<string, Policy>();

/** Sets the models this process offers (tests, the local stack), replacing what the environment said. */
export function configureAgentModels(
  next: AgentModelsConfig | ((spec: string, step: string) => Policy),
): void {
  policies.clear();
  if (typeof next === 'function') {
    factory = next;
    config = undefined;
  } else {
    factory = undefined;
    config = next;
  }
}

/** The policy an agent step of `step` uses for `spec`. */
export function policyForStep(spec: string, step: string): Policy {
  if (factory) return factory(spec, step);
  const known = policies.get(spec);
  if (known) return known;
  config ??= agentConfigFromEnv();
  const policy = policyFor(spec, config, step);
  policies.set(spec, policy);
  return policy;
}
