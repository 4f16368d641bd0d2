/** Agent models in the stack: RunStep alone may invoke exactly the configured Bedrock models; none by default. */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import { parseAgentModels } from '../../../cdk/config.ts';
import { ConfigError } from '../../../cdk/errors.ts';
import { cdkJsonContext, TestApps } from '../../support/cdk.ts';
import { flatten, type Statement } from '../../support/cdk-template.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

function bedrockGrants(context: Record<string, unknown>): { fn: string[]; resources: string[] } {
  const stack = configureApp(apps.app({ ...cdkJsonContext(), ...context }), {});
  const template = Template.fromStack(stack);
  const fn: string[] = [];
  const resources: string[] = [];
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
    const perms = flatten(policy.Properties.PolicyDocument.Statement as Statement[]).filter((p) =>
      p.action.startsWith('bedrock:'),
    );
    if (perms.length === 0) continue;
    const roles = JSON.stringify(policy.Properties.Roles);
    fn.push(/^\[\{"Ref":"RunStepRole[0-9A-F]+"\}\]$/.test(roles) ? 'RunStep' : roles);
    for (const p of perms) {
      expect(p.action).toBe('bedrock:InvokeModel');
      resources.push(p.resource);
    }
  }
  return { fn, resources };
}

describe('CDK: agent models', () => {
  it('grants no Bedrock access without configured models', () => {
    expect(bedrockGrants({})).toEqual({ fn: [], resources: [] });
  });

  it('grants RunStep InvokeModel on exactly the configured Bedrock model ids', () => {
    const { fn, resources } = bedrockGrants({
      'belay:agentModels':
        'bedrock:anthropic.claude-haiku-4-5-20251001-v1:0,bedrock:eu.anthropic.claude-sonnet-4-5-20250929-v1:0,anthropic:claude-haiku-4-5',
    });
    expect(fn).toEqual(['RunStep']);
    expect(resources).toHaveLength(3);
    const has = (part: string): boolean => resources.some((r) => r.includes(part));
    expect(has('::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0')).toBe(true);
    expect(has(':inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(true);
    expect(resources).toContain(
      '"arn:aws:bedrock:*::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0"',
    );
    expect(resources.join()).not.toContain('foundation-model/*');
  });

  it("binds RunStep alone to a secret for each other provider's key the configured models use", () => {
    const stack = configureApp(
      apps.app({ ...cdkJsonContext(), 'belay:agentModels': 'anthropic:claude-haiku-4-5,local' }),
      {},
    );
    const template = Template.fromStack(stack);
    const secrets = Object.entries(template.findResources('AWS::SecretsManager::Secret'))
      .filter(([, r]) => String(r.Properties.Description).includes('agent steps'))
      .map(([id]) => id);
    // An Anthropic model: its key's secret; no OpenAI model: no secret for OpenAI.
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).toMatch(/^AnthropicApiKey/);
    const withArn = Object.entries(template.findResources('AWS::Lambda::Function'))
      .filter(([, fn]) => fn.Properties.Environment?.Variables?.BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN)
      .map(([id]) => id);
    expect(withArn).toHaveLength(1);
    expect(withArn[0]).toMatch(/^RunStep/);
    expect(
      template.findResources('AWS::Lambda::Function')[withArn[0] as string]?.Properties.Environment.Variables
        .BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN,
    ).toEqual({ Ref: secrets[0] });
    // Only RunStep's role may read it.
    const readers = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) =>
        flatten(policy.Properties.PolicyDocument.Statement as Statement[]).some(
          (p) => p.action === 'secretsmanager:GetSecretValue' && p.resource.includes(secrets[0] as string),
        ),
      )
      .map((policy) => JSON.stringify(policy.Properties.Roles));
    expect(readers).toHaveLength(1);
    expect(readers[0]).toMatch(/^\[\{"Ref":"RunStepRole[0-9A-F]+"\}\]$/);
    // No model of another provider: nothing for them.
    expect(JSON.stringify(template.toJSON())).not.toContain('BELAY_AGENT_OPENAI_API_KEY_SECRET_ARN');
  });

  it('makes no provider-key secret without such models', () => {
    const template = Template.fromStack(configureApp(apps.app({ ...cdkJsonContext() }), {}));
    expect(JSON.stringify(template.toJSON())).not.toContain('BELAY_AGENT_ANTHROPIC_API_KEY_SECRET_ARN');
  });

  it('refuses a value that is not model specs', () => {
    expect(() => parseAgentModels('gpt-5')).toThrow(ConfigError);
    expect(parseAgentModels(['bedrock:amazon.nova-lite-v1:0'])).toEqual(['bedrock:amazon.nova-lite-v1:0']);
  });
});
