import type { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { GetCommand } from '../aws/sdk/lib-dynamodb.ts';
import { linkEntry } from './chain.ts';
import { LedgerUnavailableError } from './errors.ts';
import type { JobSnapshot } from './items.ts';
import { jobKey } from './keys.ts';
import { translateError } from './translate.ts';
import type { LedgerEntry } from './types.ts';

/**
 * Writing an entry into the job's hash chain. Each write is conditioned on the head it read
 * (`chainHead`) and moves it to the new entry's hash, in the same transaction as the entry, so
 * two writes can never link to the same entry (no fork). A write refused only because another
 * entry landed first (the head moved, the write's own conditions may still hold) is linked
 * again after the new head and retried: an unfenced append (a probe's answer, a cancellation
 * asked for) never makes a fenced write stale, since the job's version did not move. A write
 * refused with the head it used is refused for its own reasons, as before the chain.
 */

type TransactItems = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>;

/** Tries before a write gives up because the chain kept moving (each move is another write that succeeded). */
export const CHAIN_ATTEMPTS = 10;

/** Jobs whose head this process remembers (the most recently used). */
const HEADS_KEPT = 1024;

/**
 * The heads this process last saw, per job: the first try of a write links after it, and a
 * stale one costs one refused try. `null`: the job has no chained entry yet.
 */
export class ChainHeads {
  readonly #heads = new Map<string, string | null>();

  get(tenantId: string, jobId: string): string | null | undefined {
    return this.#heads.get(`${tenantId}/${jobId}`);
  }

  set(tenantId: string, jobId: string, head: string | undefined): void {
    const key = `${tenantId}/${jobId}`;
    this.#heads.delete(key);
    this.#heads.set(key, head ?? null);
    if (this.#heads.size > HEADS_KEPT) this.#heads.delete(this.#heads.keys().next().value as string);
  }
}

/** What a chained write needs of the ledger's context. */
export interface ChainContext {
  doc: DynamoDBDocumentClient;
  tableName: string;
  chainHeads: ChainHeads;
}

/** The job's chain head: remembered, else read (consistent GetItem of the one attribute). */
async function knownHead(
  ctx: ChainContext,
  tenantId: string,
  jobId: string,
  operation: string,
): Promise<string | undefined> {
  const remembered = ctx.chainHeads.get(tenantId, jobId);
  if (remembered !== undefined) return remembered ?? undefined;
  try {
    const out = await ctx.doc.send(
      new GetCommand({
        TableName: ctx.tableName,
        Key: jobKey(tenantId, jobId),
        ProjectionExpression: '#h',
        ExpressionAttributeNames: { '#h': 'chainHead' },
        ConsistentRead: true,
      }),
    );
    return typeof out?.Item?.chainHead === 'string' ? out.Item.chainHead : undefined;
  } catch (err) {
    throw translateError(err, { operation });
  }
}

/** An `Update` of the job item as `UpdateBuilder.build()` makes it. */
export interface JobItemUpdate {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** `update` that also moves the job's head from `head` (none: the job has no chained entry) to `next`, on condition it is still `head`. */
export function withChainHead<T extends JobItemUpdate>(update: T, head: string | undefined, next: string): T {
  const set = '#chainHead = :chainNext';
  const expression = update.UpdateExpression.startsWith('SET ')
    ? `SET ${set}, ${update.UpdateExpression.slice(4)}`
    : `SET ${set}${update.UpdateExpression ? ` ${update.UpdateExpression}` : ''}`;
  const condition = head === undefined ? 'attribute_not_exists(#chainHead)' : '#chainHead = :chainPrev';
  return {
    ...update,
    UpdateExpression: expression,
    ConditionExpression: update.ConditionExpression
      ? `${update.ConditionExpression} AND (${condition})`
      : condition,
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#chainHead': 'chainHead' },
    ExpressionAttributeValues: {
      ...update.ExpressionAttributeValues,
      ':chainNext': next,
      ...(head === undefined ? {} : { ':chainPrev': head }),
    },
  };
}

/** A write refused because the head moved: `head` is the one the job has now. */
class ChainMoved extends Error {
  constructor(readonly head: string | undefined) {
    super('the chain head moved');
  }
}

export interface ChainedWrite {
  operation: string;
  tenantId: string;
  jobId: string;
  /** A sealed entry (`prepareEntry`). */
  entry: LedgerEntry;
  /** The transaction for the entry linked after `head`: its job item update passed through {@link withChainHead}. */
  items(linked: LedgerEntry, head: string | undefined): TransactItems;
  /** Why the write was refused, when the head it used is still the job's (or there is no job). */
  onConditionFailed(snapshot: JobSnapshot | undefined, index: number): Error;
  /** Runs the transaction (`transact` of `store.ts`). */
  transact(
    context: {
      operation: string;
      onConditionFailed: (snapshot: JobSnapshot | undefined, index: number) => Error;
    },
    items: TransactItems,
  ): Promise<void>;
}

/**
 * Writes a sealed entry linked after the job's head, retried with the new head while the head
 * is all that stopped it. Returns the entry as written (with `prevHash` and `hash`).
 *
 * @throws LedgerUnavailableError when the chain moved {@link CHAIN_ATTEMPTS} times in a row
 */
export async function writeChained(ctx: ChainContext, write: ChainedWrite): Promise<LedgerEntry> {
  const { operation, tenantId, jobId } = write;
  let head = await knownHead(ctx, tenantId, jobId, operation);
  for (let attempt = 1; ; attempt++) {
    const linked = linkEntry(write.entry, head);
    try {
      await write.transact(
        {
          operation,
          onConditionFailed: (snapshot, index) =>
            snapshot !== undefined && snapshot.chainHead !== head
              ? new ChainMoved(snapshot.chainHead)
              : write.onConditionFailed(snapshot, index),
        },
        write.items(linked, head),
      );
      ctx.chainHeads.set(tenantId, jobId, linked.hash);
      return linked;
    } catch (err) {
      if (!(err instanceof ChainMoved)) throw err;
      ctx.chainHeads.set(tenantId, jobId, err.head);
      if (attempt >= CHAIN_ATTEMPTS) {
        throw new LedgerUnavailableError(
          operation,
          `the job's ledger moved on ${attempt} times during the write`,
          { cause: err },
        );
      }
      head = err.head;
    }
  }
}
