import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BelayFunction,
  type BelayFunctionProps,
  compileCacheHook,
} from '../../../cdk/constructs/belay-function.ts';
import { ConfigError, RuntimeModuleError } from '../../../cdk/errors.ts';
import { fixture, TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
const nodes = mkdtempSync(join(tmpdir(), 'belay-lambda-node-'));
afterAll(() => {
  apps.cleanup();
  rmSync(nodes, { recursive: true, force: true });
});

/** A stand-in for a Node binary that says it is `version` on `arch` (what the check asks it). */
function fakeNode(version: string, arch: string): string {
  const file = join(nodes, `node-${version}-${arch}`);
  writeFileSync(file, `#!/bin/sh\necho "${version} ${arch}"\n`);
  chmodSync(file, 0o755);
  return file;
}

function synth(props: Partial<BelayFunctionProps> = {}): { template: Template; fn: BelayFunction } {
  const stack = new Stack(apps.app(), 'FunctionTest');
  const fn = new BelayFunction(stack, 'Step', {
    entry: fixture('plain-handler.ts'),
    timeout: Duration.seconds(30),
    ...props,
  });
  return { template: Template.fromStack(stack), fn };
}

describe('Construct: BelayFunction', () => {
  const { template, fn } = synth({ environment: { STAGE: 'test' } });

  it('runs Node 22 on arm64 with active tracing, 1024 MB and the given timeout', () => {
    template.resourceCountIs('AWS::Lambda::Function', 1);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      MemorySize: 1024,
      Timeout: 30,
    });
  });

  it('starts Node without source maps by default: no NODE_OPTIONS next to its own variables', () => {
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(fn?.Properties.Environment.Variables).toEqual({ STAGE: 'test', BELAY_TRACING: 'xray' });
  });

  it('logs JSON to its own log group, kept one month and retained by default', () => {
    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    const logGroupId = Object.keys(template.findResources('AWS::Logs::LogGroup'))[0];
    template.hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 30 },
      DeletionPolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: logGroupId } },
    });
  });

  it('has its own role without managed policies, allowed to write only its log group', () => {
    template.resourceCountIs('AWS::IAM::Role', 1);
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
      },
      ManagedPolicyArns: Match.absent(),
    });
    const logGroupId = Object.keys(template.findResources('AWS::Logs::LogGroup'))[0];
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
          },
        ],
      },
    });
    expect(fn.role).toBe(fn.executionRole);
  });

  it('keeps the X-Ray wildcard in a tracing policy of its own, created before the function', () => {
    const policies = template.findResources('AWS::IAM::Policy', {
      Properties: {
        PolicyDocument: {
          Statement: [
            {
              Effect: 'Allow',
              Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
              Resource: '*',
            },
          ],
        },
      },
    });
    const ids = Object.keys(policies);
    expect(ids).toHaveLength(1);
    template.hasResource('AWS::Lambda::Function', { DependsOn: Match.arrayWith([ids[0]]) });
  });

  it.each([
    [{ memorySize: 2048 }, { MemorySize: 2048 }],
    [
      { environment: { NODE_OPTIONS: '--max-old-space-size=900' } },
      { Environment: { Variables: { NODE_OPTIONS: '--max-old-space-size=900' } } },
    ],
    [{ sourceMaps: true }, { Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps' } } }],
    [
      { sourceMaps: true, environment: { NODE_OPTIONS: '--max-old-space-size=900' } },
      {
        Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps --max-old-space-size=900' } },
      },
    ],
    [{ handler: 'main' }, { Handler: 'index.main' }],
  ])('takes %j', (props, expected) => {
    synth(props).template.hasResourceProperties('AWS::Lambda::Function', expected);
  });

  it('takes a log retention and removal policy', () => {
    synth({
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    }).template.hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: 7 },
      DeletionPolicy: 'Delete',
    });
  });

  it('refuses to be built without a timeout', () => {
    const props = { entry: fixture('plain-handler.ts') } as BelayFunctionProps;
    expect(() => new BelayFunction(new Stack(apps.app(), 'NoTimeout'), 'Step', props)).toThrow(
      /timeout is required/,
    );
  });

  it.each([
    ['left-pad-not-installed', /is not installed/],
    ['anchorbrowser', /has dependencies \(playwright, ws\)/],
    ["x'; rm -rf / #", /is not an npm package name/],
  ])('refuses runtime module %j', (name, message) => {
    const build = (): unknown => synth({ runtimeModules: [name] });
    expect(build).toThrow(RuntimeModuleError);
    expect(build).toThrow(message);
  });

  it("with the runtime's Node, starts reading the compile cache shipped beside the bundle, pinned to the runtime version", () => {
    const runtime = 'arn:aws:lambda:eu-west-1::runtime:0123456789abcdef';
    const { template } = synth({ lambdaNode: fakeNode('v22.23.5', 'arm64'), lambdaRuntimeVersion: runtime });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ NODE_COMPILE_CACHE: '/var/task/.node-compile-cache' }) },
      RuntimeManagementConfig: { UpdateRuntimeOn: 'Manual', RuntimeVersionArn: runtime },
    });
  });

  it.each([
    ['v22.23.5', 'x64', /Node 22 on arm64 \(this one is v22\.23\.5 on x64\)/],
    ['v20.20.2', 'arm64', /this one is v20\.20\.2 on arm64/],
  ])(
    "refuses a Node that is not the runtime's (%s on %s): its cache would never be read",
    (version, arch, message) => {
      const build = (): unknown => synth({ lambdaNode: fakeNode(version, arch) });
      expect(build).toThrow(ConfigError);
      expect(build).toThrow(message);
    },
  );

  it("builds the cache after bundling with that Node, Lambda's flags for the memory, named for /var/task", () => {
    const hook = compileCacheHook('/opt/node/bin/node', 1024, ['playwright-core']);
    const [command] = hook.afterBundling('/in', "/out/asset's");
    expect(command).toContain('tools/compile-cache/main.ts');
    expect(command).toContain("--bundle '/out/asset'\\''s/index.mjs'");
    expect(command).toContain(
      "--node '/opt/node/bin/node' --memory 1024 --runtime-modules 'playwright-core'",
    );
    expect(command).toMatch(/--relocate \/var\/task$/);
  });
});
