import { type App, Validations } from 'aws-cdk-lib';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import type { BelayStack } from '../../../cdk/stacks/belay-stack.ts';
import { ROUTES } from '../../../lambdas/lib/api/routes.ts';
import { cdkJsonContext, TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

/** The app as `cdk synth -c belay:nag=true` builds it. */
function nagApp(nag = true): { stack: BelayStack; app: App } {
  const app = apps.app({ ...cdkJsonContext(), 'belay:nag': nag });
  const stack = configureApp(app, {});
  return { stack, app };
}

const ENGINE = [
  'Start',
  'OpenSession',
  'RunStep',
  'Reauthenticate',
  'Reconcile',
  'AwaitHuman',
  'Finish',
  'RecordFailure',
];
const FUNCTIONS = [...ENGINE, 'ApiHandler', 'ApiAuthorizer', 'Notifier', 'Watchdog', 'RecoverJobs'];
const CREDENTIALS =
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:belay/*]';

/**
 * Every acknowledgement the stack may carry, as `<path> <rule>`: the runtime (L1) and X-Ray's
 * `Resource: *` per function, the ledger's index wildcard per function bound to all of it,
 * credentials under `belay/*` for those that sign in, the executions the API and the recovery
 * function stop, look up and start (by name, known at run time), the state
 * machine's logging level and CDK's log-delivery/X-Ray statements, the provider secrets'
 * rotation and the two open routes.
 */
function expectedAcknowledgements(): unknown[] {
  const unconditionalTable = FUNCTIONS.filter((name) => name !== 'ApiAuthorizer' && name !== 'Notifier');
  return [
    ...FUNCTIONS.map((name) => `Belay/${name} AwsSolutions-L1`),
    ...FUNCTIONS.map((name) => `Belay/${name}/TracingPolicy AwsSolutions-IAM5[Resource::*]`),
    ...unconditionalTable.map((name) =>
      expect.stringMatching(
        new RegExp(`^Belay/${name}Role AwsSolutions-IAM5\\[Resource::<Ledger[0-9A-F]+\\.Arn>/index/\\*\\]$`),
      ),
    ),
    ...['RunStep', 'Reauthenticate', 'Finish', 'ApiHandler'].map(
      (name) => `Belay/${name}Role ${CREDENTIALS}`,
    ),
    ...['ApiHandler', 'RecoverJobs'].map((name) =>
      expect.stringMatching(
        new RegExp(
          `^Belay/${name}Role AwsSolutions-IAM5\\[Resource::arn:.*:execution:.*JobsMachine.*:\\*\\]$`,
        ),
      ),
    ),
    'Belay/Jobs/Machine AwsSolutions-SF1',
    'Belay/Jobs/Machine/Role AwsSolutions-IAM5[Resource::*]',
    'Belay/AnchorApiKey AwsSolutions-SMG4',
    'Belay/AnchorWebhookSecret AwsSolutions-SMG4',
    ...['RunStep', 'Reconcile', 'ApiHandler'].map((name) =>
      expect.stringMatching(
        new RegExp(
          `^Belay/${name}Role AwsSolutions-IAM5\\[Resource::<ScreenshotsBucket[0-9A-F]+\\.Arn>/tenants/\\*\\]$`,
        ),
      ),
    ),
    'Belay/Screenshots/Bucket AwsSolutions-S1',
    'Belay/WebhookSigningKey AwsSolutions-SMG4',
    // The open routes: Anchor's webhook, the OpenAPI document, and the console's (cookie-authenticated).
    ...ROUTES.filter((r) => !r.auth).map(
      (r) => `Belay/Api/HttpApi/${r.method}${r.path.replace(/\//g, '--')} AwsSolutions-APIG4`,
    ),
  ];
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
    const got = acks.map((a) => `${a.path} ${a.id.replace(/^annotation::/i, '')}`);
    const expected = expectedAcknowledgements();
    expect(got).toHaveLength(expected.length);
    expect(got).toEqual(expect.arrayContaining(expected));
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
