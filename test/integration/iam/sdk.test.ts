/**
 * The enforcement under real SDK clients against DynamoDB Local: a call the policy allows
 * reaches the table; one it does not is answered as AWS answers it (the SDK's
 * DynamoDBServiceException named AccessDeniedException, HTTP 400, a client fault) and
 * nothing reaches the table, not even the allowed items of a refused transaction.
 */

import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../local/dynamodb.ts';
import { bindClient, type EnforcementSpec, runAs } from '../../../local/iam/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

const ddb = useDynamoDb();

function spec(
  tableName: string,
  actions: string[],
  extra: EnforcementSpec['policy']['statements'] = [],
): EnforcementSpec {
  const arn = `arn:aws:dynamodb:us-east-1:000000000000:table/${tableName}`;
  return {
    policy: {
      constructId: 'Test',
      functionName: 'belay-test',
      callerArn: 'arn:aws:sts::000000000000:assumed-role/Belay-TestRole/belay-test',
      statements: [{ Effect: 'Allow', Action: actions, Resource: [arn, `${arn}/index/*`] }, ...extra],
    },
    facts: {
      region: 'us-east-1',
      account: '000000000000',
      tables: { [tableName]: { hashKey: 'pk', indexes: { gsi1: 'gsi1pk', gsi2: 'gsi2pk' } } },
    },
  };
}

async function refusal(p: Promise<unknown>): Promise<DynamoDBServiceException> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DynamoDBServiceException);
  return err as DynamoDBServiceException;
}

describe('Function: runAs (DynamoDB Local)', () => {
  it('lets an allowed call through and refuses the rest as AWS does', async () => {
    const table = ddb.tableName();
    const doc = ddb.doc();
    const key = { pk: 'T#t#J#sdk-1', sk: 'JOB' };
    const writer = spec(table, ['dynamodb:PutItem', 'dynamodb:GetItem']);
    await runAs(writer, () => doc.send(new PutCommand({ TableName: table, Item: { ...key, n: 1 } })));
    const read = await runAs(writer, () => doc.send(new GetCommand({ TableName: table, Key: key })));
    expect(read.Item?.n).toBe(1);

    const err = await refusal(
      runAs(spec(table, ['dynamodb:GetItem']), () =>
        doc.send(new PutCommand({ TableName: table, Item: { ...key, n: 2 } })),
      ),
    );
    expect(err.name).toBe('AccessDeniedException');
    expect(err.$fault).toBe('client');
    expect(err.$metadata.httpStatusCode).toBe(400);
    expect(err.message).toBe(
      `User: arn:aws:sts::000000000000:assumed-role/Belay-TestRole/belay-test is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/${table} because no identity-based policy allows the dynamodb:PutItem action`,
    );
    // Outside any scope (the test itself) nothing is checked; the refused write never landed.
    expect((await doc.send(new GetCommand({ TableName: table, Key: key }))).Item?.n).toBe(1);
  });

  it('refuses a whole transaction when one item is not allowed, and writes none of it', async () => {
    const table = ddb.tableName();
    const doc = ddb.doc();
    const err = await refusal(
      runAs(spec(table, ['dynamodb:PutItem', 'dynamodb:GetItem']), () =>
        doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: table, Item: { pk: 'T#t#J#sdk-2', sk: 'E#1' } } },
              {
                Update: {
                  TableName: table,
                  Key: { pk: 'T#t#J#sdk-2', sk: 'JOB' },
                  UpdateExpression: 'SET v = :v',
                  ExpressionAttributeValues: { ':v': 1 },
                },
              },
            ],
          }),
        ),
      ),
    );
    expect(err.message).toContain('dynamodb:UpdateItem');
    expect(
      (await doc.send(new GetCommand({ TableName: table, Key: { pk: 'T#t#J#sdk-2', sk: 'E#1' } }))).Item,
    ).toBeUndefined();
  });

  it('checks a Query on an index against the index ARN', async () => {
    const table = ddb.tableName();
    const doc = ddb.doc();
    const arn = `arn:aws:dynamodb:us-east-1:000000000000:table/${table}`;
    const tableOnly = spec(table, ['dynamodb:GetItem']);
    tableOnly.policy.statements = [{ Effect: 'Allow', Action: 'dynamodb:Query', Resource: arn }];
    const query = () =>
      doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :p',
          ExpressionAttributeValues: { ':p': 'T#t#S#QUEUED' },
        }),
      );
    expect((await refusal(runAs(tableOnly, query))).message).toContain(`on resource: ${arn}/index/gsi1`);
    await expect(runAs(spec(table, ['dynamodb:Query']), query)).resolves.toMatchObject({ Count: 0 });
  });
});

describe('Function: bindClient', () => {
  it('holds every call of one client to a policy, wherever it is made from', async () => {
    const table = ddb.tableName();
    const bound = createDocumentClient(ddb.endpoint());
    try {
      bindClient(bound, spec(table, ['dynamodb:GetItem']));
      await expect(
        bound.send(new GetCommand({ TableName: table, Key: { pk: 'x', sk: 'y' } })),
      ).resolves.toBeDefined();
      expect(
        (await refusal(bound.send(new PutCommand({ TableName: table, Item: { pk: 'x', sk: 'y' } })))).name,
      ).toBe('AccessDeniedException');
      // Another client of the same process is not bound.
      await expect(
        ddb.doc().send(new PutCommand({ TableName: table, Item: { pk: 'x', sk: 'y' } })),
      ).resolves.toBeDefined();
    } finally {
      bound.destroy();
    }
  });
});
