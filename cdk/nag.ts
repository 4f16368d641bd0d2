/**
 * Helpers for acknowledging cdk-nag findings precisely. cdk-nag v3 reads acknowledgements
 * from CDK's `Validations.of(construct).acknowledge()`; a finding of a rule that reports
 * several (IAM5: one per wildcard) is acknowledged by its own id, `Rule[Finding]`, so an
 * acknowledgement never hides a different wildcard added later.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Flattens a resolved CloudFormation value the way cdk-nag names IAM5 findings
 * (mirrors cdk-nag's `flattenCfnReference`): `Fn::GetAtt` -> `<Id.Attr>`, `Ref` -> `<Id>`,
 * `Fn::Join` joined, `Fn::Sub` with `${X}` -> `<X>`, anything else as JSON.
 */
export function flattenForNag(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/}/g, '>');
  const node = value as Record<string, unknown>;
  if (node['Fn::Join']) {
    const [delimiter, items] = node['Fn::Join'] as [string, unknown[]];
    return items.map(flattenForNag).join(delimiter);
  }
  if (node['Fn::Sub']) return flattenForNag(node['Fn::Sub']);
  if (node['Fn::GetAtt']) {
    const [resource, attribute] = node['Fn::GetAtt'] as [unknown, unknown];
    return `<${flattenForNag(resource)}.${flattenForNag(attribute)}>`;
  }
  if (node['Fn::ImportValue']) return flattenForNag(node['Fn::ImportValue']);
  if (node.Ref) return `<${flattenForNag(node.Ref)}>`;
  return JSON.stringify(value);
}

/**
 * Acknowledges AwsSolutions-IAM5 for exactly one wildcard resource (an ARN, possibly a
 * token) on `scope` and its children.
 *
 * @param scope the construct holding the policy (the role, or the policy itself)
 * @param resourceArn the resource as written in the policy statement, e.g. `${table.tableArn}/index/*`
 * @param reason why the wildcard is needed; shows in the validation report
 */
export function acknowledgeWildcardResource(scope: IConstruct, resourceArn: string, reason: string): void {
  const flat = flattenForNag(Stack.of(scope).resolve(resourceArn));
  Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flat}]`, reason });
}
