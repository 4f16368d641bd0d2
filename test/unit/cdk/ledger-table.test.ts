import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import { TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

function ledgerTemplate(context: Record<string, unknown> = {}): Template {
  return Template.fromStack(configureApp(apps.app(context), {}));
}

describe('Construct: LedgerTable', () => {
  const template = ledgerTemplate();

  it('is the only table, keyed pk/sk (strings), on demand', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayEquals(
        ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'].map((name) => ({
          AttributeName: name,
          AttributeType: 'S',
        })),
      ),
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('has gsi1 and gsi2 with their own keys, projecting all attributes, and the sparse gsi3 of unfinished jobs', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'gsi2',
          KeySchema: [
            { AttributeName: 'gsi2pk', KeyType: 'HASH' },
            { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'gsi3',
          KeySchema: [
            { AttributeName: 'gsi3pk', KeyType: 'HASH' },
            { AttributeName: 'gsi3sk', KeyType: 'RANGE' },
          ],
          Projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: ['tenantId', 'jobId', 'status', 'executionName'],
          },
        },
      ],
    });
  });

  it('expires items by expiresAt, keeps point-in-time recovery and encrypts with the AWS managed KMS key', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      // SSEEnabled without SSEType/KMSMasterKeyId = KMS with the AWS managed key aws/dynamodb.
      SSESpecification: { SSEEnabled: true, SSEType: Match.absent(), KMSMasterKeyId: Match.absent() },
    });
  });

  it.each([
    ['unset (default)', {}, 'Retain', true],
    ['retain', { 'belay:removalPolicy': 'retain' }, 'Retain', true],
    ['destroy', { 'belay:removalPolicy': 'destroy' }, 'Delete', false],
  ])('follows belay:removalPolicy %s', (_name, context, policy, protectedFromDeletion) => {
    const table = ledgerTemplate(context).findResources('AWS::DynamoDB::Table');
    const [resource] = Object.values(table);
    expect(resource).toMatchObject({
      DeletionPolicy: policy,
      UpdateReplacePolicy: policy,
      Properties: { DeletionProtectionEnabled: protectedFromDeletion },
    });
  });
});
