import { ConditionalCheckFailedException } from '../aws/sdk/client-dynamodb.ts';

/**
 * Whether a conditional write went through: `false` when DynamoDB refused its condition, the
 * write's own error otherwise.
 *
 * @example
 * const created = await conditionHeld(doc.send(new PutCommand({ ..., ConditionExpression: 'attribute_not_exists(pk)' })));
 */
export async function conditionHeld(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
