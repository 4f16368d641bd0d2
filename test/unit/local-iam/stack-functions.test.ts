import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TemplateError } from '../../../local/iam/errors.ts';
import type { CfnTemplate } from '../../../local/iam/template.ts';
import {
  LOCAL_AWS,
  LOCAL_FUNCTIONS,
  localFunctionArn,
  localFunctions,
} from '../../../local/stack-functions.ts';
import { wireTemplate } from '../../../local/template-wiring.ts';

const LOCAL = {
  region: LOCAL_AWS.REGION,
  account: LOCAL_AWS.ACCOUNT,
  stackName: LOCAL_AWS.STACK_NAME,
  tableName: 'belay-local',
  stateMachineArn: LOCAL_AWS.STATE_MACHINE_ARN,
  functions: LOCAL_FUNCTIONS,
};

/**
 * Every function the local stack runs, as CDK writes it (a role each, a timeout, variables),
 * with timeouts no hand-kept table would have: the local stack must read them off the template.
 */
function template(
  overrides: Record<string, { Timeout?: number; Variables?: Record<string, unknown> }>,
): CfnTemplate {
  const resources: CfnTemplate['Resources'] = {
    Ledger: {
      Type: 'AWS::DynamoDB::Table',
      Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] },
    },
    WaitEvents9FAF4C7B: { Type: 'AWS::Events::EventBus', Properties: { Name: 'BelayWaitEventsAECE10B4' } },
  };
  Object.keys(LOCAL_FUNCTIONS).forEach((id, i) => {
    const { Timeout = 11 + i, Variables = { BELAY_SECRETS: 'none' } } = overrides[id] ?? {};
    resources[`${id}Role0000000${i}`] = { Type: 'AWS::IAM::Role', Properties: {} };
    resources[`${id}1234567${i}`] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Role: { 'Fn::GetAtt': [`${id}Role0000000${i}`, 'Arn'] },
        ...(Timeout === 0 ? {} : { Timeout }),
        Environment: { Variables: { TABLE_NAME: { Ref: 'Ledger' }, ...Variables } },
      },
      Metadata: { 'aws:cdk:path': `Belay/${id}/Resource` },
    };
  });
  return { Resources: resources };
}

const dir = mkdtempSync(join(tmpdir(), 'belay-stack-functions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function wired(t: CfnTemplate): Promise<Awaited<ReturnType<typeof wireTemplate>>> {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.template.json`);
  writeFileSync(file, JSON.stringify(t));
  return wireTemplate({ template: file, log: () => undefined }, LOCAL);
}

describe('Function: localFunctions', () => {
  it("runs every function but the API's with the template's timeout, variables and policy", async () => {
    const wiring = await wired(
      template({
        RunStep: {
          Timeout: 149,
          Variables: { BELAY_SECRETS: 'secretsmanager:belay', NODE_OPTIONS: '--enable-source-maps' },
        },
        AwaitHuman: {
          Timeout: 59,
          Variables: { BELAY_SECRETS: 'none', EVENT_BUS_NAME: { Ref: 'WaitEvents9FAF4C7B' } },
        },
        RecoverJobs: { Timeout: 299, Variables: { BELAY_SECRETS: 'none' } },
        Notifier: { Timeout: 89, Variables: { BELAY_SECRETS: 'none', BELAY_BROWSER_ACCESS: 'none' } },
        // The watchdog is deployed with no store at all: it gets none locally either.
        Watchdog: { Timeout: 119, Variables: { BELAY_BROWSER_ACCESS: 'none', BELAY_DEFAULT_PLAN: 'free' } },
      }),
    );
    const functions = localFunctions(wiring, { RunStep: 2 });

    expect(Object.keys(functions).sort()).toEqual(
      (
        [
          'Start',
          'OpenSession',
          'RunStep',
          'Reauthenticate',
          'Reconcile',
          'AwaitHuman',
          'Finish',
          'RecordFailure',
        ] as const
      )
        .map((id) => localFunctionArn(id))
        .concat([localFunctionArn('RecoverJobs'), localFunctionArn('Notifier'), localFunctionArn('Watchdog')])
        .sort(),
    );
    expect(functions[localFunctionArn('RunStep')]).toEqual({
      entry: 'lambdas/run-step/handler.ts',
      timeoutMs: 149_000,
      // Node's options as deployed (belay:sourceMaps): the worker starts as the function does.
      env: { NODE_OPTIONS: '--enable-source-maps' },
      provisioned: 2,
      iam: wiring.spec('RunStep'),
      // Started with the heap of its memory as Lambda sets it, with the runtime's modules outside its bundle.
      memoryMb: 128,
      runtimeModules: ['playwright-core'],
    });
    expect(functions[localFunctionArn('AwaitHuman')]).toMatchObject({
      entry: 'lambdas/await-human/handler.ts',
      timeoutMs: 59_000,
      env: { BELAY_SECRETS: 'none', EVENT_BUS_NAME: 'BelayWaitEventsAECE10B4' },
      provisioned: 0,
    });
    expect(functions[localFunctionArn('RecoverJobs')]).toMatchObject({
      entry: 'lambdas/recover/handler.ts',
      timeoutMs: 299_000,
      env: { BELAY_SECRETS: 'none' },
    });
    expect(functions[localFunctionArn('Notifier')]).toMatchObject({
      entry: 'lambdas/notify/handler.ts',
      timeoutMs: 89_000,
      env: { BELAY_SECRETS: 'none', BELAY_BROWSER_ACCESS: 'none' },
    });
    expect(functions[localFunctionArn('Watchdog')]).toMatchObject({
      entry: 'lambdas/watchdog/handler.ts',
      timeoutMs: 119_000,
      env: { BELAY_SECRETS: 'none', BELAY_BROWSER_ACCESS: 'none' },
    });
  });

  it('names a function the template gives no timeout', async () => {
    const wiring = await wired(template({ Finish: { Timeout: 0 } }));
    expect(() => localFunctions(wiring, {})).toThrow(TemplateError);
    expect(() => localFunctions(wiring, {})).toThrow('gives Finish no Timeout');
  });
});
