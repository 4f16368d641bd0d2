import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { BelayFunction } from '../../../cdk/constructs/belay-function.ts';
import { JobStateMachine, placeholdersOf } from '../../../cdk/constructs/job-state-machine.ts';
import { BindingError } from '../../../cdk/errors.ts';
import { STATE_MACHINE_DEFINITION } from '../../../cdk/paths.ts';
import { STATE_MACHINE_FUNCTIONS, type StateMachineFunction } from '../../../lambdas/lib/engine/functions.ts';
import { fixture, TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
/** An ASL placeholder, `${name}` (built, so it is not mistaken for a template string). */
const placeholder = (name: string): string => '$' + '{' + name + '}';
const dirs: string[] = [];
afterAll(() => {
  apps.cleanup();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function functionsIn(stack: Stack): Record<StateMachineFunction, IFunction> {
  const out = {} as Record<StateMachineFunction, IFunction>;
  for (const name of Object.keys(STATE_MACHINE_FUNCTIONS) as StateMachineFunction[]) {
    out[name] = new BelayFunction(stack, name, {
      entry: fixture('plain-handler.ts'),
      timeout: Duration.seconds(5),
    });
  }
  return out;
}

function aslFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'belay-asl-test-'));
  dirs.push(dir);
  const file = join(dir, 'job.asl.json');
  writeFileSync(file, text);
  return file;
}

describe('Construct: JobStateMachine', () => {
  it('finds the placeholders of an ASL text', () => {
    expect(
      placeholdersOf(
        `{"a":"${placeholder('B')}","b":"${placeholder('A')}","c":"${placeholder('B')}","d":"$.x","e":"${placeholder(' not ')}"}`,
      ),
    ).toEqual(['A', 'B']);
  });

  it('uses the repository ASL by default, with a role that can only invoke the given functions', () => {
    const stack = new Stack(apps.app(), 'MachineTest');
    const machine = new JobStateMachine(stack, 'Jobs', { functions: functionsIn(stack) });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      DefinitionString: readFileSync(STATE_MACHINE_DEFINITION, 'utf8'),
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: '/aws/vendedlogs/states/MachineTest-Jobs',
    });
    expect(machine.stateMachine.stateMachineType).toBe('STANDARD');
    const invoke = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: unknown; Resource: unknown }[])
      .filter((s) => JSON.stringify(s.Action).includes('lambda:'));
    expect(invoke).toEqual([
      {
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: Object.keys(STATE_MACHINE_FUNCTIONS).map((name) => ({
          'Fn::GetAtt': [stack.getLogicalId(stack.node.findChild(name).node.defaultChild as never), 'Arn'],
        })),
      },
    ]);
  });

  it.each([
    [
      'a placeholder without a function',
      (asl: string) =>
        asl.replace('"States"', `"Comment2": "${placeholder('UnknownFunctionArn')}", "States"`),
      /no function for \[UnknownFunctionArn\]/,
    ],
    [
      'a function without a placeholder',
      (asl: string) =>
        asl.replaceAll(
          placeholder('ReconcileFunctionArn'),
          'arn:aws:lambda:us-east-1:123456789012:function:x',
        ),
      /no placeholder for \[ReconcileFunctionArn\]/,
    ],
  ])('refuses an ASL with %s', (_name, edit, message) => {
    const original = readFileSync(STATE_MACHINE_DEFINITION, 'utf8');
    const asl = edit(original);
    expect(asl).not.toBe(original);
    const file = aslFile(asl);
    const build = (): unknown => {
      const stack = new Stack(apps.app(), 'MismatchTest');
      return new JobStateMachine(stack, 'Jobs', { functions: functionsIn(stack), definitionFile: file });
    };
    expect(build).toThrow(BindingError);
    expect(build).toThrow(message);
  });
});
