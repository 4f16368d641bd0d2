import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { conflictFigures } from '../../../tools/bench/scale/conflicts.ts';
import { probeDynamo } from '../../../tools/bench/scale/probe.ts';

/** A document client whose every write is refused as DynamoDB refuses it (no service behind it). */
function refusingClient(): DynamoDBDocumentClient {
  const doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  doc.middlewareStack.add(
    (_next, context) => async () => {
      const command = String((context as { commandName?: string }).commandName);
      const err = new Error('refused') as Error & { CancellationReasons?: { Code: string }[] };
      if (command.startsWith('TransactWrite')) {
        err.name = 'TransactionCanceledException';
        err.CancellationReasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }];
      } else err.name = 'ConditionalCheckFailedException';
      throw err;
    },
    { step: 'initialize', name: 'refuse', priority: 'low' },
  );
  return doc;
}

const sum = (note: string | undefined): number =>
  [...(note ?? '').replace(/^.*by partition: /, '').matchAll(/ (\d+)/g)].reduce(
    (a, m) => a + Number(m[1]),
    0,
  );

describe('Function: conflictFigures', () => {
  it('breaks each kind of conflict down by the partitions of its own refusals (the notes add up to the figures)', async () => {
    const doc = refusingClient();
    const probe = probeDynamo(doc);
    const refused = (p: Promise<unknown>) => p.catch(() => undefined);
    // Two refused single writes on rate-limit items, three transactions cancelled on a tenant's capacity item.
    for (const id of ['k1', 'k2'])
      await refused(doc.send(new PutCommand({ TableName: 't', Item: { pk: `RATE#${id}`, sk: 'RATE' } })));
    for (let i = 0; i < 3; i++)
      await refused(
        doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: 't', Item: { pk: 'T#acme#J#job-1', sk: 'JOB' } } },
              {
                Update: {
                  TableName: 't',
                  Key: { pk: 'T#acme#CAP', sk: 'STATE' },
                  UpdateExpression: 'SET v = :v',
                  ExpressionAttributeValues: { ':v': i },
                },
              },
            ],
          }),
        ),
      );

    const figures = conflictFigures(probe, {});
    const figure = (label: string) => figures.find((f) => f.label === label);
    const single = figure('conflicts: ConditionalCheckFailed');
    const transactions = figure('conflicts: TransactionCanceled');
    expect(single?.value).toBe(2);
    expect(single?.note).toBe('by partition: RATE#<id> 2');
    expect(transactions?.value).toBe(3);
    expect(transactions?.note).toBe('ConditionalCheckFailed 3; by partition: T#<tenant>#CAP 3');
    expect(sum(single?.note)).toBe(single?.value);
    expect(figure('conflicts: StaleCheckpointError')).toMatchObject({ value: 0, note: 'none' });
  });
});
