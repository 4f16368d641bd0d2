/**
 * Binding RunStep to the agent models a deployment offers: `BELAY_AGENT_MODELS` names them and
 * the role may invoke exactly the Bedrock ones (their foundation-model ARNs in the stack's
 * region, and a cross-region inference profile with the models it routes to), nothing else.
 * Anthropic's and OpenAI's keys are secrets the stack binds to RunStep (`belay-stack.ts`).
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { parseModelSpec } from '../../lambdas/lib/agent/model-spec.ts';

/** Invoke a model (Converse and InvokeModel are both authorised by `bedrock:InvokeModel`). */
export const BEDROCK_INVOKE = Object.freeze(['bedrock:InvokeModel'] as const);

const PROFILE = /^(us|eu|apac|global|us-gov)\./;

/** The IAM resources of one Bedrock model id. */
export function bedrockModelArns(stack: Stack, modelId: string): string[] {
  if (!PROFILE.test(modelId)) return [`arn:aws:bedrock:${stack.region}::foundation-model/${modelId}`];
  // An inference profile routes to its model in the regions of its geography.
  const base = modelId.replace(PROFILE, '');
  return [
    `arn:aws:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
    `arn:aws:bedrock:*::foundation-model/${base}`,
  ];
}

/** Sets `BELAY_AGENT_MODELS` on `fn` and grants InvokeModel on the Bedrock models among `specs`. */
export function bindAgentModels(fn: LambdaFunction, specs: readonly string[]): void {
  fn.addEnvironment('BELAY_AGENT_MODELS', ['local', ...specs.filter((s) => s !== 'local')].join(','));
  const stack = Stack.of(fn);
  const resources = specs
    .map((s) => parseModelSpec(s))
    .filter((m) => m?.provider === 'bedrock')
    .flatMap((m) => bedrockModelArns(stack, m?.id ?? ''));
  if (resources.length === 0) return;
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: [...BEDROCK_INVOKE], resources }));
}
