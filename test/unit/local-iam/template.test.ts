import { describe, expect, it } from 'vitest';
import { localBinding } from '../../../local/iam/binding.ts';
import { TemplateError } from '../../../local/iam/errors.ts';
import { functionPolicies, tableFacts } from '../../../local/iam/policies.ts';
import { type CfnTemplate, createResolver, logicalIdOf } from '../../../local/iam/template.ts';

/** The shapes CDK writes, cut down: a table, a machine, a function, its role and policy. */
const TEMPLATE: CfnTemplate = {
  Resources: {
    LedgerB7379752: {
      Type: 'AWS::DynamoDB::Table',
      Properties: {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'gsi1',
            KeySchema: [
              { AttributeName: 'gsi1pk', KeyType: 'HASH' },
              { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
            ],
          },
        ],
      },
    },
    JobsMachine29A9C1AD: { Type: 'AWS::StepFunctions::StateMachine', Properties: {} },
    WaitEvents9FAF4C7B: { Type: 'AWS::Events::EventBus', Properties: { Name: 'BelayWaitEventsAECE10B4' } },
    RunStepRole64636B92: { Type: 'AWS::IAM::Role', Properties: {} },
    RunStep6793BE8D: {
      Type: 'AWS::Lambda::Function',
      Properties: { Role: { 'Fn::GetAtt': ['RunStepRole64636B92', 'Arn'] } },
    },
    RunStepRoleDefaultPolicy1234ABCD: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'RunStepRole64636B92' }],
        PolicyDocument: {
          Statement: [
            {
              Effect: 'Allow',
              Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
              Resource: [
                { 'Fn::GetAtt': ['LedgerB7379752', 'Arn'] },
                { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['LedgerB7379752', 'Arn'] }, '/index/*']] },
              ],
            },
            {
              Effect: 'Allow',
              Action: 'states:DescribeExecution',
              Resource: {
                'Fn::Join': [
                  '',
                  [
                    'arn:',
                    { Ref: 'AWS::Partition' },
                    ':states:',
                    { Ref: 'AWS::Region' },
                    ':',
                    { Ref: 'AWS::AccountId' },
                    ':execution:',
                    { 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: 'JobsMachine29A9C1AD' }] }] },
                    ':*',
                  ],
                ],
              },
            },
            {
              Effect: 'Allow',
              Action: 'events:PutEvents',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub syntax
              Resource: { 'Fn::Sub': '${WaitEvents9FAF4C7B.Arn}' },
            },
          ],
        },
      },
    },
  },
};

const LOCAL = {
  region: 'us-east-1',
  account: '000000000000',
  stackName: 'Belay',
  tableName: 'belay-local',
  stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:belay-local',
  functions: { RunStep: 'belay-run-step' },
};

describe('Function: functionPolicies', () => {
  it("resolves a function's statements to the local ARNs", () => {
    const { RunStep } = functionPolicies(TEMPLATE, localBinding(TEMPLATE, LOCAL), LOCAL.functions);
    expect(RunStep?.callerArn).toBe(
      'arn:aws:sts::000000000000:assumed-role/Belay-RunStepRole64636B92/belay-run-step',
    );
    expect(RunStep?.statements.map((s) => s.Resource)).toEqual([
      [
        'arn:aws:dynamodb:us-east-1:000000000000:table/belay-local',
        'arn:aws:dynamodb:us-east-1:000000000000:table/belay-local/index/*',
      ],
      'arn:aws:states:us-east-1:000000000000:execution:belay-local:*',
      'arn:aws:events:us-east-1:000000000000:event-bus/BelayWaitEventsAECE10B4',
    ]);
  });

  it('names a function the template lacks', () => {
    expect(() =>
      functionPolicies(TEMPLATE, localBinding(TEMPLATE, LOCAL), { Finish: 'belay-finish' }),
    ).toThrow(TemplateError);
  });
});

describe('Function: tableFacts', () => {
  it('gives the partition keys of the table and its indexes under the local name', () => {
    expect(tableFacts(TEMPLATE, localBinding(TEMPLATE, LOCAL))).toEqual({
      'belay-local': { hashKey: 'pk', indexes: { gsi1: 'gsi1pk' } },
    });
  });
});

describe('Function: createResolver', () => {
  it('refuses a reference to a resource the template does not define', () => {
    const resolve = createResolver(TEMPLATE, localBinding(TEMPLATE, LOCAL));
    expect(() => resolve({ Ref: 'Nowhere' })).toThrow(TemplateError);
  });
});

describe('Function: logicalIdOf', () => {
  it("finds CDK's resource for a construct by its path metadata, else by its name and hash", () => {
    expect(logicalIdOf(TEMPLATE, 'AWS::Lambda::Function', 'RunStep')).toBe('RunStep6793BE8D');
    const withPath: CfnTemplate = {
      Resources: {
        Odd: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:cdk:path': 'Belay/RunStep/Resource' } },
      },
    };
    expect(logicalIdOf(withPath, 'AWS::Lambda::Function', 'RunStep')).toBe('Odd');
  });
});
