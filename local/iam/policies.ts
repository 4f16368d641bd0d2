/**
 * Each function's identity policy, read from the synthesized template: the statements of every
 * `AWS::IAM::Policy` attached to the function's role (and the role's inline policies), with
 * their intrinsics resolved to the local ARNs. What the local Lambda runner holds a worker to.
 */

import { TemplateError } from './errors.ts';
import type { PolicyStatement } from './evaluate.ts';
import {
  type CfnTemplate,
  createResolver,
  type LocalBinding,
  logicalIdOf,
  resourcesOfType,
} from './template.ts';

/** What a call's IAM request is built from, beyond the call itself: the local resources' facts. */
export interface ResourceFacts {
  region: string;
  account: string;
  /** Tables by name: their partition key (for `dynamodb:LeadingKeys`) and their indexes' partition keys. */
  tables: Record<string, { hashKey: string; indexes: Record<string, string> }>;
  /**
   * The state machine a task token belongs to. `SendTask*` name no resource of their own;
   * IAM authorizes them on the state machine whose task issued the token.
   */
  stateMachineArn?: string;
}

/** A function's identity as AWS reports it in a refusal, and its policy. */
export interface FunctionPolicy {
  /** The construct id (`RunStep`, `ApiHandler`). */
  constructId: string;
  /** The function's name (the role session name of its calls). */
  functionName: string;
  /** `arn:aws:sts::<account>:assumed-role/<role name>/<function name>`: the caller AWS names. */
  callerArn: string;
  statements: PolicyStatement[];
}

/** Everything the enforcement in one process needs: whose calls, under which policy, over which resources. */
export interface EnforcementSpec {
  policy: FunctionPolicy;
  facts: ResourceFacts;
}

function asStatements(document: unknown): PolicyStatement[] {
  const statement = (document as { Statement?: unknown } | undefined)?.Statement;
  if (statement === undefined) return [];
  return [statement].flat() as PolicyStatement[];
}

/** The role's logical id from a function's `Role` (`{"Fn::GetAtt": [roleId, "Arn"]}`). */
function roleIdOf(fnId: string, role: unknown): string {
  const getAtt = (role as { 'Fn::GetAtt'?: unknown } | undefined)?.['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  throw new TemplateError(`${fnId} has a role the local stack cannot follow: ${JSON.stringify(role)}`);
}

/**
 * The policies of the functions made for `constructIds` (`{ RunStep: 'belay-run-step' }`:
 * construct id -> local function name).
 *
 * @throws TemplateError when a function or its role is not in the template
 */
export function functionPolicies(
  template: CfnTemplate,
  binding: LocalBinding,
  constructIds: Record<string, string>,
): Record<string, FunctionPolicy> {
  const out: Record<string, FunctionPolicy> = {};
  for (const [constructId, functionName] of Object.entries(constructIds)) {
    const fnId = logicalIdOf(template, 'AWS::Lambda::Function', constructId);
    if (!fnId) throw new TemplateError(`the template has no function ${constructId}`);
    const roleId = roleIdOf(fnId, template.Resources[fnId]?.Properties?.Role);
    out[constructId] = {
      constructId,
      functionName,
      callerArn: `arn:aws:sts::${binding.account}:assumed-role/${binding.stackName}-${roleId}/${functionName}`,
      statements: roleStatements(template, binding, roleId, `function ${constructId}`),
    };
  }
  return out;
}

/** Every statement the role `roleId` holds: its attached `AWS::IAM::Policy`s and inline policies, resolved. */
function roleStatements(
  template: CfnTemplate,
  binding: LocalBinding,
  roleId: string,
  whose: string,
): PolicyStatement[] {
  const role = template.Resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new TemplateError(`${whose} has no role ${roleId}`);
  const resolve = createResolver(template, binding);
  const attached = resourcesOfType(template, 'AWS::IAM::Policy')
    .map((id) => template.Resources[id])
    .filter((p) =>
      ((p?.Properties?.Roles as unknown[] | undefined) ?? []).some(
        (r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId }),
      ),
    );
  const inline = ((role.Properties?.Policies as { PolicyDocument?: unknown }[] | undefined) ?? []).map(
    (p) => p.PolicyDocument,
  );
  // Managed policies (ARNs outside the template) grant nothing here: a house role has none.
  return [...attached.map((p) => p?.Properties?.PolicyDocument), ...inline].flatMap((doc) =>
    asStatements(resolve(doc)),
  );
}

/**
 * The policy of the state machine's role (what it may invoke), or undefined when the template has
 * no state machine (or gives it no role). Its calls are Step Functions' own, so its session is named `StepFunctions`.
 */
export function stateMachinePolicy(template: CfnTemplate, binding: LocalBinding): FunctionPolicy | undefined {
  const id = resourcesOfType(template, 'AWS::StepFunctions::StateMachine')[0];
  const roleArn = id ? template.Resources[id]?.Properties?.RoleArn : undefined;
  if (!id || roleArn === undefined) return undefined;
  const roleId = roleIdOf(id, roleArn);
  return {
    constructId: id,
    functionName: 'StepFunctions',
    callerArn: `arn:aws:sts::${binding.account}:assumed-role/${binding.stackName}-${roleId}/StepFunctions`,
    statements: roleStatements(template, binding, roleId, `state machine ${id}`),
  };
}

/** The template's tables under their local names, with the partition keys of the table and each index. */
export function tableFacts(
  template: CfnTemplate,
  binding: LocalBinding,
): Record<string, { hashKey: string; indexes: Record<string, string> }> {
  const resolve = createResolver(template, binding);
  const out: Record<string, { hashKey: string; indexes: Record<string, string> }> = {};
  type KeySchema = { AttributeName: string; KeyType: string }[];
  const hashOf = (schema: unknown): string =>
    ((schema as KeySchema | undefined) ?? []).find((k) => k.KeyType === 'HASH')?.AttributeName ?? '';
  for (const id of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
    const props = template.Resources[id]?.Properties ?? {};
    const name = String(resolve({ Ref: id }));
    const indexes: Record<string, string> = {};
    for (const gsi of (props.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[]) ?? []) {
      indexes[gsi.IndexName] = hashOf(gsi.KeySchema);
    }
    for (const lsi of (props.LocalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[]) ?? []) {
      indexes[lsi.IndexName] = hashOf(lsi.KeySchema);
    }
    out[name] = { hashKey: hashOf(props.KeySchema), indexes };
  }
  return out;
}
