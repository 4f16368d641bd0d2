import { Duration, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp, environmentFrom, STACK_NAME } from '../../cdk/belay-app.ts';
import { cdkJsonContext, fixture, TestApps } from './support.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

describe('Stack: BelayStack', () => {
  it('holds the ledger table and outputs its name', () => {
    const stack = configureApp(apps.app(cdkJsonContext()), {});
    const template = Template.fromStack(stack);
    expect(stack.stackName).toBe(STACK_NAME);
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.resourceCountIs('AWS::Lambda::Function', 0);
    template.hasOutput('LedgerTableName', {
      Value: { Ref: stack.getLogicalId(stack.ledger.node.defaultChild as never) },
    });
  });

  it('is environment-agnostic unless the CLI names an account or region', () => {
    expect(environmentFrom({})).toBeUndefined();
    expect(environmentFrom({ CDK_DEFAULT_ACCOUNT: '', CDK_DEFAULT_REGION: '' })).toBeUndefined();
    expect(environmentFrom({ CDK_DEFAULT_ACCOUNT: '123456789012', CDK_DEFAULT_REGION: 'eu-west-1' })).toEqual(
      {
        account: '123456789012',
        region: 'eu-west-1',
      },
    );
    const agnostic = configureApp(apps.app(), {});
    expect(Token.isUnresolved(agnostic.account)).toBe(true);
    const pinned = configureApp(apps.app(), { env: { account: '123456789012', region: 'eu-west-1' } });
    expect(pinned.region).toBe('eu-west-1');
  });

  it.each([
    [{}, 30, 'Retain'],
    [{ 'belay:logRetentionDays': '7', 'belay:removalPolicy': 'destroy' }, 7, 'Delete'],
  ])('addFunction gives log groups the configured retention and removal (%j)', (context, days, policy) => {
    const stack = configureApp(apps.app(context), {});
    stack.addFunction('Step', { entry: fixture('plain-handler.ts'), timeout: Duration.seconds(5) });
    Template.fromStack(stack).hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: days },
      DeletionPolicy: policy,
    });
  });
});
