/**
 * IAM as the local stack enforces it: each function held to its policy in the synthesized
 * template. `stackPolicies` reads a template for the local stack's resources; the specs it
 * returns go to the local Lambda runner (one per worker) and to in-process callers
 * (`runAs`, `bindClient`).
 */
import { type LocalResources, localBinding } from './binding.ts';
import {
  type EnforcementSpec,
  type FunctionPolicy,
  functionPolicies,
  type ResourceFacts,
  stateMachinePolicy,
  tableFacts,
} from './policies.ts';
import { type CfnTemplate, readTemplate } from './template.ts';

export {
  bindClient,
  enforceForProcess,
  installIamEnforcement,
  onRefused,
  type Refusal,
  runAs,
} from './enforce.ts';
export { invokeAsStateMachine } from './invoke.ts';
export type { EnforcementSpec, FunctionPolicy, ResourceFacts } from './policies.ts';
export { synthesizedTemplate } from './synth.ts';

/** The policies of a template's functions, bound to the local stack's resources. */
export interface StackPolicies {
  template: CfnTemplate;
  facts: ResourceFacts;
  /** By construct id (`RunStep`, `ApiHandler`). */
  specs: Record<string, EnforcementSpec>;
  /** The state machine role's policy (what it may invoke); undefined when the template has no machine. */
  stateMachine: FunctionPolicy | undefined;
}

/**
 * Reads `templateFile` and returns the policy of every function in `local.functions`.
 *
 * @throws TemplateError when the template lacks one of them
 */
export function stackPolicies(templateFile: string, local: LocalResources): StackPolicies {
  const template = readTemplate(templateFile);
  const binding = localBinding(template, local);
  const facts: ResourceFacts = {
    region: local.region,
    account: local.account,
    tables: tableFacts(template, binding),
    stateMachineArn: local.stateMachineArn,
  };
  const policies = functionPolicies(template, binding, local.functions);
  const specs = Object.fromEntries(
    Object.entries(policies).map(([id, policy]) => [id, { policy, facts } satisfies EnforcementSpec]),
  );
  return { template, facts, specs, stateMachine: stateMachinePolicy(template, binding) };
}
