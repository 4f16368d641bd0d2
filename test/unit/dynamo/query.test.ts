/**
 * The paginated Query every reader of more than one page uses: it follows `LastEvaluatedKey`
 * from page to page, and reads no page after the caller stopped.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { queryAll, queryPages, queryPrefix } from '../../../lambdas/lib/dynamo/query.ts';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const ddb = mockClient(doc);

beforeEach(() => {
  ddb.reset();
  ddb
    .on(QueryCommand)
    .resolvesOnce({ Items: [{ n: 1 }, { n: 2 }], LastEvaluatedKey: { pk: 'p', sk: '2' } })
    .resolvesOnce({ Items: [{ n: 3 }], LastEvaluatedKey: { pk: 'p', sk: '3' } })
    .resolvesOnce({});
});

describe('Function: queryAll', () => {
  it('reads every page, each from where the last one ended', async () => {
    const input = {
      TableName: 't',
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'p' },
    };
    expect(await queryAll(doc, input)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const starts = ddb.commandCalls(QueryCommand).map((c) => c.args[0].input.ExclusiveStartKey);
    expect(starts).toEqual([undefined, { pk: 'p', sk: '2' }, { pk: 'p', sk: '3' }]);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toEqual(input);
  });
});

describe('Function: queryPages', () => {
  it('reads no page after the caller has seen enough', async () => {
    for await (const items of queryPages(doc, { TableName: 't', KeyConditionExpression: 'pk = :pk' })) {
      expect(items).toEqual([{ n: 1 }, { n: 2 }]);
      break;
    }
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
  });
});

describe('Function: queryPrefix', () => {
  it('asks for the partition and the sort-key prefix', async () => {
    expect(await queryPrefix(doc, 't', 'T#a', 'ACCOUNT#')).toHaveLength(3);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'T#a', ':prefix': 'ACCOUNT#' },
    });
  });
});
