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

  it('refuses a value that is not model specs', () => {
    expect(() => parseAgentModels('gpt-5')).toThrow(ConfigError);
    expect(parseAgentModels(['bedrock:amazon.nova-lite-v1:0'])).toEqual(['bedrock:amazon.nova-lite-v1:0']);
  });
});
