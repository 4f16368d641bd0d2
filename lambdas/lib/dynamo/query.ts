import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '../aws/sdk/lib-dynamodb.ts';

/**
 * The pages of a Query, one after another: DynamoDB answers at most 1 MB a page, and the next
 * starts after the last one's `LastEvaluatedKey`. A caller that has seen enough stops
 * iterating, and no further page is read.
 *
 * @example
 * for await (const items of queryPages(doc, { TableName, KeyConditionExpression, ... })) use(items);
 */
export async function* queryPages(
  doc: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): AsyncGenerator<Record<string, unknown>[]> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new QueryCommand({ ...input, ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }) }),
    );
    yield out.Items ?? [];
    startKey = out.LastEvaluatedKey;
  } while (startKey !== undefined);
}

/** Every item of a Query, all its pages read. */
export async function queryAll(
  doc: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of queryPages(doc, input)) items.push(...page);
  return items;
}

/** Every item of partition `pk` whose sort key starts with `prefix`. */
export async function queryPrefix(
  doc: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  prefix: string,
): Promise<Record<string, unknown>[]> {
  return queryAll(doc, {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
  });
}
