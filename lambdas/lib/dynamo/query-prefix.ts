import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';

/** Every item of partition `pk` whose sort key starts with `prefix`, following pages past 1 MB. */
export async function queryPrefix(
  doc: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  prefix: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await doc.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(res.Items ?? []));
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return items;
}
