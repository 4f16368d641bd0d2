import { ConditionalCheckFailedException } from '../aws/sdk/client-dynamodb.ts';
import { UpdateCommand } from '../aws/sdk/lib-dynamodb.ts';
import { UpdateBuilder } from './expression.ts';
import { assertId, jobKey } from './keys.ts';
import type { LedgerContext } from './store.ts';
import { translateError } from './translate.ts';

/**
 * A sign of life of the attempt that owns the job's write intent (`Job.writeOwner`): renews
 * its heartbeat, or marks it released when its invocation ends. One UpdateItem that does not
 * move the job's version (the owner's own checkpoint is fenced by it); refused (`false`) when
 * another attempt owns the intent by now.
 */
export async function touchWriteOwner(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  attemptId: string,
  options: { release?: boolean } = {},
): Promise<boolean> {
  assertId('tenantId', tenantId);
  assertId('jobId', jobId);
  const now = ctx.now().toISOString();
  const u = new UpdateBuilder();
  u.setIn(['writeOwner', 'heartbeatAt'], now);
  if (options.release) u.setIn(['writeOwner', 'releasedAt'], now);
  u.when(`${u.path('writeOwner', 'attemptId')} = ${u.value(attemptId)}`);
  try {
    await ctx.doc.send(
      new UpdateCommand({ TableName: ctx.tableName, Key: jobKey(tenantId, jobId), ...u.build() }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw translateError(err, { operation: 'touchWriteOwner' });
  }
}
