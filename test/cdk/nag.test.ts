import { type App, Duration, Validations } from 'aws-cdk-lib';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../cdk/belay-app.ts';
import { PLAYWRIGHT_RUNTIME_MODULES } from '../../cdk/constructs/belay-function.ts';
import {
  bindStateMachine,
  bindTable,
  LEDGER_WRITE,
  STATE_MACHINE_CALLBACK,
} from '../../cdk/constructs/bind.ts';
import type { BelayStack } from '../../cdk/stacks/belay-stack.ts';
import { cdkJsonContext, fixture, TestApps } from './support.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

/** The app as `cdk synth -c belay:nag=true` builds it, plus one bound handler as issue 5 will add them. */
function nagApp(nag = true): { stack: BelayStack; app: App } {
  const app = apps.app({ ...cdkJsonContext(), 'belay:nag': nag });
  const stack = configureApp(app, {});
  const fn = stack.addFunction('RunStep', {
    entry: fixture('browser-handler.ts'),
    timeout: Duration.minutes(2),
    runtimeModules: PLAYWRIGHT_RUNTIME_MODULES,
  });
  bindTable(fn, stack.ledger, { env: 'LEDGER_TABLE', actions: LEDGER_WRITE });
  const machine = StateMachine.fromStateMachineName(stack, 'JobMachine', 'belay-job');
  bindStateMachine(fn, machine, {
    env: 'JOB_STATE_MACHINE_ARN',
    actions: [...STATE_MACHINE_CALLBACK, 'states:DescribeExecution'],
  });
  return { stack, app };
}

/** Every acknowledgement recorded in the tree: construct path, rule id, reason. */
function acknowledgements(root: IConstruct): { path: string; id: string; reason: unknown }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, unknown>).map(([id, reason]) => ({
          path: construct.node.path,
          id,
          reason,
        })),
      ),
  );
}

describe('cdk-nag: AwsSolutions on the Belay stack', () => {
  it('reports no unacknowledged finding', () => {
    const { app } = nagApp();
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const findings = report.violations.map(
      (v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(findings).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('acknowledges only known findings, each with its reason', () => {
    const { app } = nagApp();
    const acks = acknowledgements(app);
    expect(acks.map((a) => `${a.path} ${a.id.replace(/^annotation::/i, '')}`).sort()).toEqual(
      [
        'Belay/RunStep AwsSolutions-L1',
        'Belay/RunStep/TracingPolicy AwsSolutions-IAM5[Resource::*]',
        expect.stringMatching(
          /^Belay\/RunStepRole AwsSolutions-IAM5\[Resource::<Ledger[0-9A-F]+\.Arn>\/index\/\*\]$/,
        ),
        expect.stringMatching(
          /^Belay\/RunStepRole AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:states:.*:execution:belay-job:\*\]$/,
        ),
      ].sort(),
    );
    for (const ack of acks) {
      expect(typeof ack.reason, ack.id).toBe('string');
      expect((ack.reason as string).length, `${ack.id} needs a reason`).toBeGreaterThan(40);
    }
  });

  it('fails the synth with belay:nag=true on a finding, and not without it', () => {
    for (const nag of [true, false]) {
      const { stack, app } = nagApp(nag);
      // No point-in-time recovery: AwsSolutions-DDB3.
      new Table(stack, 'Careless', { partitionKey: { name: 'id', type: AttributeType.STRING } });
      const synth = (): unknown => app.synth();
      if (nag) expect(synth).toThrow(/AwsSolutions-DDB3/);
      else expect(synth).not.toThrow();
    }
  });

  it('lets the nag-enabled synth pass as built', () => {
    const { app } = nagApp();
    expect(() => app.synth()).not.toThrow();
  });
});
