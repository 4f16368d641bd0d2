/**
 * Reading a synthesized template the way the IAM tests need: which statements apply to a
 * function's role, flattened to one action per row, and logical ids by construct.
 */
import type { Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';

/** One IAM statement of a policy, as written in the template. */
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, unknown>;
}

/** One allowed action on one resource (a statement flattened). */
export interface Permission {
  action: string;
  /** The resource as JSON (`{"Ref":"X"}`, `"*"`, a joined ARN). */
  resource: string;
  condition?: Record<string, unknown>;
}

/** The logical id of a construct's CloudFormation resource (its default child for L2s). */
export function logicalId(stack: Stack, construct: IConstruct): string {
  const resource = (construct.node.defaultChild ?? construct) as never;
  return stack.getLogicalId(resource);
}

/** Every statement of the policies attached to role `roleId`. */
export function roleStatements(template: Template, roleId: string): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) =>
      (policy.Properties.Roles as unknown[]).some(
        (r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId }),
      ),
    )
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

/** The role logical id of function `functionId`. */
export function roleOfFunction(template: Template, functionId: string): string {
  const fn = template.findResources('AWS::Lambda::Function')[functionId];
  const role = fn?.Properties.Role as { 'Fn::GetAtt': [string, string] } | undefined;
  if (!role) throw new Error(`no function ${functionId} with a role`);
  return role['Fn::GetAtt'][0];
}

/** Every Allow of function `functionId`'s role, one action on one resource per row. */
export function permissionsOf(template: Template, functionId: string): Permission[] {
  return flatten(roleStatements(template, roleOfFunction(template, functionId)));
}

/** Statements flattened to one action on one resource per row; Deny and NotAction are refused. */
export function flatten(statements: Statement[]): Permission[] {
  return statements.flatMap((s) => {
    if (s.Effect !== 'Allow' || !('Action' in s))
      throw new Error(`unexpected statement ${JSON.stringify(s)}`);
    const resources = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
    return [s.Action].flat().flatMap((action) =>
      resources.map((r) => ({
        action,
        resource: JSON.stringify(r),
        ...(s.Condition ? { condition: s.Condition } : {}),
      })),
    );
  });
}

/** The sorted, distinct actions of `permissions` that start with `prefix`. */
export function actionsWith(permissions: Permission[], prefix: string): string[] {
  return [...new Set(permissions.map((p) => p.action).filter((a) => a.startsWith(prefix)))].sort();
}
