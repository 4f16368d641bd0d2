import { describe, expect, it } from 'vitest';
import type { ResourceFacts } from '../../../local/iam/policies.ts';
import { refusalMessage } from '../../../local/iam/refusal.ts';
import { iamRequests } from '../../../local/iam/requests.ts';

const FACTS: ResourceFacts = {
  region: 'us-east-1',
  account: '000000000000',
  tables: { 'belay-local': { hashKey: 'pk', indexes: { gsi1: 'gsi1pk', gsi2: 'gsi2pk' } } },
  stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:belay-local',
};
const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/belay-local';
const ddb = (command: string, input: Record<string, unknown>) =>
  iamRequests(FACTS, 'DynamoDBClient', command, input);

describe('Function: iamRequests (DynamoDB)', () => {
  it('names the item-level action with the partition key, plain or marshalled', () => {
    expect(ddb('GetItemCommand', { TableName: 'belay-local', Key: { pk: 'T#a#J#1', sk: 'JOB' } })).toEqual([
      { action: 'dynamodb:GetItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['T#a#J#1'] } },
    ]);
    expect(
      ddb('UpdateItemCommand', { TableName: 'belay-local', Key: { pk: { S: 'T#a#J#1' }, sk: { S: 'JOB' } } }),
    ).toEqual([
      { action: 'dynamodb:UpdateItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['T#a#J#1'] } },
    ]);
    expect(
      ddb('PutItemCommand', { TableName: 'belay-local', Item: { pk: { S: 'T#a#CAP' } } })[0]?.context,
    ).toEqual({
      'dynamodb:LeadingKeys': ['T#a#CAP'],
    });
  });

  it('authorizes a transaction item by item, each under its own action', () => {
    const requests = ddb('TransactWriteItemsCommand', {
      TransactItems: [
        { Update: { TableName: 'belay-local', Key: { pk: { S: 'T#a#J#1' }, sk: { S: 'JOB' } } } },
        { Put: { TableName: 'belay-local', Item: { pk: { S: 'T#a#J#1' }, sk: { S: 'E#1' } } } },
        { ConditionCheck: { TableName: 'belay-local', Key: { pk: { S: 'T#a#J#1' }, sk: { S: 'JOB' } } } },
        { Delete: { TableName: 'belay-local', Key: { pk: { S: 'T#a#CAP' }, sk: { S: 'L#1' } } } },
      ],
    });
    expect(requests.map((r) => [r.action, r.context?.['dynamodb:LeadingKeys']])).toEqual([
      ['dynamodb:UpdateItem', ['T#a#J#1']],
      ['dynamodb:PutItem', ['T#a#J#1']],
      ['dynamodb:ConditionCheckItem', ['T#a#J#1']],
      ['dynamodb:DeleteItem', ['T#a#CAP']],
    ]);
  });

  it("queries an index on the index's ARN, with its partition key", () => {
    expect(
      ddb('QueryCommand', {
        TableName: 'belay-local',
        IndexName: 'gsi1',
        KeyConditionExpression: '#p = :p AND gsi1sk < :sk',
        ExpressionAttributeNames: { '#p': 'gsi1pk' },
        ExpressionAttributeValues: { ':p': { S: 'T#a#S#QUEUED' }, ':sk': { S: 'x' } },
      }),
    ).toEqual([
      {
        action: 'dynamodb:Query',
        resource: `${TABLE}/index/gsi1`,
        context: { 'dynamodb:LeadingKeys': ['T#a#S#QUEUED'] },
      },
    ]);
    expect(
      ddb('QueryCommand', {
        TableName: 'belay-local',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'T#a#J#1' },
      })[0],
    ).toMatchObject({ resource: TABLE, context: { 'dynamodb:LeadingKeys': ['T#a#J#1'] } });
  });

  it('authorizes a batch per table, with every key', () => {
    expect(
      ddb('BatchGetItemCommand', {
        RequestItems: { 'belay-local': { Keys: [{ pk: { S: 'a' } }, { pk: { S: 'b' } }] } },
      }),
    ).toEqual([
      { action: 'dynamodb:BatchGetItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['a', 'b'] } },
    ]);
  });
});

describe('Function: iamRequests (other services)', () => {
  it('maps Step Functions calls to the machine, its executions, and task tokens to the machine', () => {
    const exec = `${FACTS.stateMachineArn?.replace(':stateMachine:', ':execution:')}:job-1`;
    expect(
      iamRequests(FACTS, 'SFNClient', 'StartExecutionCommand', { stateMachineArn: FACTS.stateMachineArn }),
    ).toEqual([{ action: 'states:StartExecution', resource: FACTS.stateMachineArn }]);
    expect(iamRequests(FACTS, 'SFNClient', 'StopExecutionCommand', { executionArn: exec })).toEqual([
      { action: 'states:StopExecution', resource: exec },
    ]);
    expect(iamRequests(FACTS, 'SFNClient', 'SendTaskSuccessCommand', { taskToken: 'AQB' })).toEqual([
      { action: 'states:SendTaskSuccess', resource: FACTS.stateMachineArn },
    ]);
  });

  it('gives a secret named by name its ARN with the six-character suffix', () => {
    const [r] = iamRequests(FACTS, 'SecretsManagerClient', 'GetSecretValueCommand', {
      SecretId: 'belay/acme/acct_1',
    });
    expect(r?.action).toBe('secretsmanager:GetSecretValue');
    expect(r?.resource).toMatch(
      /^arn:aws:secretsmanager:us-east-1:000000000000:secret:belay\/acme\/acct_1-[A-Za-z0-9]{6}$/,
    );
  });

  it('authorizes PutEvents on each bus named, the default bus when none', () => {
    expect(
      iamRequests(FACTS, 'EventBridgeClient', 'PutEventsCommand', {
        Entries: [{ EventBusName: 'waits' }, {}, { EventBusName: 'waits' }],
      }).map((r) => r.resource),
    ).toEqual([
      'arn:aws:events:us-east-1:000000000000:event-bus/waits',
      'arn:aws:events:us-east-1:000000000000:event-bus/default',
    ]);
  });

  it('maps S3 object calls to the object and Bedrock calls to the model', () => {
    expect(iamRequests(FACTS, 'S3Client', 'HeadObjectCommand', { Bucket: 'b', Key: 'acme/x.png' })).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/acme/x.png' },
    ]);
    expect(iamRequests(FACTS, 'S3Client', 'ListObjectsV2Command', { Bucket: 'b' })).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::b' },
    ]);
    expect(
      iamRequests(FACTS, 'BedrockRuntimeClient', 'ConverseCommand', { modelId: 'anthropic.claude' }),
    ).toEqual([
      {
        action: 'bedrock:InvokeModel',
        resource: 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude',
      },
    ]);
  });
});

describe('Function: iamRequests (Bedrock inference profiles)', () => {
  it('authorizes a cross-region inference profile on the profile and on the model it routes to', () => {
    expect(
      iamRequests(FACTS, 'BedrockRuntimeClient', 'ConverseStreamCommand', {
        modelId: 'us.anthropic.claude-sonnet-4-v1:0',
      }),
    ).toEqual([
      {
        action: 'bedrock:InvokeModelWithResponseStream',
        resource:
          'arn:aws:bedrock:us-east-1:000000000000:inference-profile/us.anthropic.claude-sonnet-4-v1:0',
      },
      {
        action: 'bedrock:InvokeModelWithResponseStream',
        resource: 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-v1:0',
      },
    ]);
  });
});

describe('Function: refusalMessage', () => {
  it('says what AWS says, naming the caller, the action and the resource', () => {
    expect(
      refusalMessage(
        'arn:aws:sts::000000000000:assumed-role/Belay-R/belay-run-step',
        { action: 'dynamodb:UpdateItem', resource: TABLE },
        false,
      ),
    ).toBe(
      `User: arn:aws:sts::000000000000:assumed-role/Belay-R/belay-run-step is not authorized to perform: dynamodb:UpdateItem on resource: ${TABLE} because no identity-based policy allows the dynamodb:UpdateItem action`,
    );
  });
});
