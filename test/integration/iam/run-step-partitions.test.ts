/**
 * RunStep's ledger access as the synthesized template grants it, enforced locally under the real
 * SDK against DynamoDB Local: playbook code runs inside RunStep, so what RunStep may write is what
 * a playbook could write. Its jobs, leases and action cache are writable; an API key (`APIKEY#`),
 * a tenant's own item (plan, accounts, webhooks) or a console session is refused with AWS's
 * AccessDeniedException, and nothing lands.
 */
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EnforcementSpec, runAs, stackPolicies, synthesizedTemplate } from '../../../local/iam/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

const ddb = useDynamoDb();
let runStep: EnforcementSpec;

beforeAll(async () => {
  const policies = stackPolicies(await synthesizedTemplate(), {
    region: 'us-east-1',
    account: '000000000000',
    stackName: 'Belay',
    tableName: ddb.tableName(),
    stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:belay-iam-test',
    functions: { RunStep: 'belay-run-step' },
  });
  const spec = policies.specs.RunStep;
  if (!spec) throw new Error('the template has no RunStep');
  runStep = spec;
}, 180_000);

async function refused(p: Promise<unknown>): Promise<DynamoDBServiceException> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DynamoDBServiceException);
  return err as DynamoDBServiceException;
}

describe("RunStep's ledger grant (dynamodb:LeadingKeys from the template)", () => {
  it('writes its jobs, leases and action cache', async () => {
    const TableName = ddb.tableName();
    const doc = ddb.doc();
    for (const pk of ['T#acme#J#job-1', 'T#acme#CAP', 'T#acme#AC#crm@1', 'AC#SHARED#crm@1']) {
      await runAs(runStep, () => doc.send(new PutCommand({ TableName, Item: { pk, sk: 'X', n: 1 } })));
      await runAs(runStep, () =>
        doc.send(
          new UpdateCommand({
            TableName,
            Key: { pk, sk: 'X' },
            UpdateExpression: 'SET n = :n',
            ExpressionAttributeValues: { ':n': 2 },
          }),
        ),
      );
    }
  });

  it.each([
    ['an API key', 'APIKEY#0123abcd', 'APIKEY'],
    ["a tenant's own item (plan, accounts, webhooks)", 'T#acme', 'TENANT'],
    ['a console session', 'CONSOLE#0123abcd', 'SESSION'],
    ['an identity claim', 'IDENTITY#ident-1', 'IDENTITY'],
  ])('refuses to write %s, as AWS does, and nothing lands', async (_what, pk, sk) => {
    const TableName = ddb.tableName();
    const doc = ddb.doc();
    const err = await refused(
      runAs(runStep, () =>
        doc.send(new PutCommand({ TableName, Item: { pk, sk, tenantId: 'acme', roles: ['admin'] } })),
      ),
    );
    expect(err.name).toBe('AccessDeniedException');
    expect(err.message).toContain('is not authorized to perform: dynamodb:PutItem');
    expect((await doc.send(new GetCommand({ TableName, Key: { pk, sk } }))).Item).toBeUndefined();
    // It may still read (a tenant's plan and accounts are read by the step's checks).
    await runAs(runStep, () => doc.send(new GetCommand({ TableName, Key: { pk, sk } })));
  });
});
