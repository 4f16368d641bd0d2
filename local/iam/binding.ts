/**
 * Where the template's resources are on one machine: the ledger table is DynamoDB Local's
 * table, the state machine the local runner's, an event bus the local bus of the same name, the
 * bucket the local S3-compatible server's, each function the local Lambda runner's function of
 * that construct. What the resolver turns
 * `Ref` and `Fn::GetAtt` into, so a policy statement names the ARNs local calls use.
 */
import { type CfnTemplate, type LocalBinding, type LocalResource, logicalIdOf } from './template.ts';

/** What the local stack runs, to bind the template's resources to. */
export interface LocalResources {
  region: string;
  account: string;
  stackName: string;
  /** The local table every `AWS::DynamoDB::Table` of the template is (the stack has one). */
  tableName: string;
  /** The local runner's state machine (every `AWS::StepFunctions::StateMachine`). */
  stateMachineArn: string;
  /** Construct id -> local function name, for the functions the local runner runs. */
  functions: Record<string, string>;
  /** The local S3 bucket every `AWS::S3::Bucket` of the template is (the stack has one: screenshots). */
  bucketName?: string;
}

/** The local ARN of a function name. */
export function functionArn(region: string, account: string, name: string): string {
  return `arn:aws:lambda:${region}:${account}:function:${name}`;
}

/** The local name of an event bus: the name the template gives it, or one made from its logical id. */
export function eventBusName(
  stackName: string,
  logicalId: string,
  properties?: Record<string, unknown>,
): string {
  return typeof properties?.Name === 'string' ? properties.Name : `${stackName}${logicalId}`;
}

/**
 * The binding of a template to the local stack's resources.
 *
 * @example
 * const binding = localBinding(template, { region, account, stackName: 'Belay', tableName: 'belay-local',
 *   stateMachineArn, functions: { RunStep: 'belay-run-step' } });
 */
export function localBinding(template: CfnTemplate, local: LocalResources): LocalBinding {
  const { region, account } = local;
  const functionIds = new Map<string, string>();
  for (const [constructId, name] of Object.entries(local.functions)) {
    const id = logicalIdOf(template, 'AWS::Lambda::Function', constructId);
    if (id) functionIds.set(id, name);
  }
  return {
    region,
    account,
    stackName: local.stackName,
    resource(logicalId, resource): LocalResource | undefined {
      const arn = (service: string, rest: string): string =>
        `arn:aws:${service}:${region}:${account}:${rest}`;
      switch (resource.Type) {
        case 'AWS::DynamoDB::Table': {
          const tableArn = arn('dynamodb', `table/${local.tableName}`);
          return {
            ref: local.tableName,
            attributes: { Arn: tableArn, StreamArn: `${tableArn}/stream/local` },
          };
        }
        case 'AWS::StepFunctions::StateMachine':
          return {
            ref: local.stateMachineArn,
            attributes: {
              Arn: local.stateMachineArn,
              Name: local.stateMachineArn.split(':').pop() ?? '',
            },
          };
        case 'AWS::Events::EventBus': {
          const name = eventBusName(local.stackName, logicalId, resource.Properties);
          return { ref: name, attributes: { Arn: arn('events', `event-bus/${name}`), Name: name } };
        }
        case 'AWS::SecretsManager::Secret': {
          const secretArn = arn('secretsmanager', `secret:${logicalId}-local0`);
          return { ref: secretArn, attributes: { Id: secretArn } };
        }
        case 'AWS::Lambda::Function': {
          const name = functionIds.get(logicalId) ?? `${local.stackName}-${logicalId}`;
          return { ref: name, attributes: { Arn: functionArn(region, account, name) } };
        }
        case 'AWS::IAM::Role': {
          const name = `${local.stackName}-${logicalId}`;
          return {
            ref: name,
            attributes: { Arn: `arn:aws:iam::${account}:role/${name}`, RoleId: logicalId },
          };
        }
        case 'AWS::Events::Rule':
          return { ref: logicalId, attributes: { Arn: arn('events', `rule/${logicalId}`) } };
        case 'AWS::Logs::LogGroup':
          return { ref: logicalId, attributes: { Arn: arn('logs', `log-group:${logicalId}:*`) } };
        case 'AWS::S3::Bucket': {
          const name = local.bucketName ?? `${local.stackName.toLowerCase()}-${logicalId.toLowerCase()}`;
          return {
            ref: name,
            attributes: {
              Arn: `arn:aws:s3:::${name}`,
              DomainName: `${name}.s3.amazonaws.com`,
              RegionalDomainName: `${name}.s3.${region}.amazonaws.com`,
            },
          };
        }
        case 'AWS::KMS::Key': {
          // No KMS runs locally: the key's local id and ARN, which policies name and the local signer is held to.
          const keyId = `${logicalId}-local`;
          return { ref: keyId, attributes: { Arn: arn('kms', `key/${keyId}`), KeyId: keyId } };
        }
        case 'AWS::SNS::Topic': {
          const topicArn = arn('sns', logicalId);
          return { ref: topicArn, attributes: { TopicArn: topicArn, TopicName: logicalId } };
        }
        default:
          return undefined;
      }
    },
  };
}
