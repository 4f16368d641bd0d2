/**
 * What the load simulation measures at the DynamoDB client, every call of every handler core and
 * of the API in this process: writes per partition key (and the GSI partitions a job-item write
 * lands in), conditional-write conflicts, latencies and reads.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A key attribute as the document client or the marshalled request carries it. */
function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { S?: unknown }).S === 'string')
    return (v as { S: string }).S;
  return undefined;
}

interface WrittenKey {
  pk: string;
  sk: string;
  /** A transaction's ConditionCheck: it reads under the transaction's lock and writes nothing. */
  check?: boolean;
}

/** The items a write command writes (a transaction's Put, Update, Delete and ConditionCheck items). */
function writtenKeys(command: string, input: Record<string, unknown>): WrittenKey[] {
  const key = (k: unknown): WrittenKey | undefined => {
    const r = k as Record<string, unknown> | undefined;
    const pk = text(r?.pk);
    return pk === undefined ? undefined : { pk, sk: text(r?.sk) ?? '' };
  };
  switch (command) {
    case 'PutCommand':
    case 'PutItemCommand':
      return [key(input.Item)].filter((k): k is WrittenKey => k !== undefined);
    case 'UpdateCommand':
    case 'UpdateItemCommand':
    case 'DeleteCommand':
    case 'DeleteItemCommand':
      return [key(input.Key)].filter((k): k is WrittenKey => k !== undefined);
    case 'TransactWriteCommand':
    case 'TransactWriteItemsCommand':
      return ((input.TransactItems as Record<string, Record<string, unknown>>[] | undefined) ?? [])
        .map((item) => {
          const op = item.Put ?? item.Update ?? item.Delete ?? item.ConditionCheck;
          const k = key(op?.Item ?? op?.Key);
          return k && item.ConditionCheck ? { ...k, check: true } : k;
        })
        .filter((k): k is WrittenKey => k !== undefined);
    default:
      return [];
  }
}

/** The partition a key belongs to, with ids reduced to their kind (`T#acme#J#*`, `RATE#*`). */
export function partitionKind(pk: string): string {
  if (/^T#[^#]+#J#/.test(pk)) return 'T#<tenant>#J#<job>';
  if (/^T#[^#]+#CAP$/.test(pk)) return 'T#<tenant>#CAP';
  if (/^T#[^#]+$/.test(pk)) return 'T#<tenant>';
  return pk.replace(/#.*$/, '#<id>');
}

export interface ProbeTotals {
  calls: number;
  writeCalls: number;
  /** Item writes, transaction items counted one each. */
  itemWrites: number;
  /** Of them, writes to job items (each copied to gsi1 and gsi2). */
  jobItemWrites: number;
  /** ConditionChecks in transactions (not writes; they cost write units all the same). */
  conditionChecks: number;
  reads: number;
  itemsRead: number;
  /** Condition failures of single writes (ConditionalCheckFailedException). */
  conditionalCheckFailed: number;
  /** Cancelled transactions, by the first cancellation code (ConditionalCheckFailed, TransactionConflict). */
  transactionsCancelled: Record<string, number>;
  /** Other errors by name. */
  errors: Record<string, number>;
}

/** Counts and latencies since the start, and a window that `takeWindow` empties. */
export interface DynamoProbe {
  totals: ProbeTotals;
  /** Item writes per partition key (`gsi2:` and `gsi1:` keys for the index partitions job items land in). */
  writesByPartition: Map<string, number>;
  /** Refused conditional writes (single or in a transaction) by the kind of partition of the item that failed. */
  conflictsByPartition: Map<string, number>;
  /** Of them, single writes refused (ConditionalCheckFailedException), by kind of partition. */
  refusedWrites: Map<string, number>;
  /** Of them, cancelled transactions, by the kind of partition of the item that cancelled each. */
  cancelledTransactions: Map<string, number>;
  /** Latencies (ms) since the last `takeWindow`, and the calls in flight right now. */
  takeWindow(): { latencies: number[]; inFlightPeak: number };
  inFlight(): number;
}

/** Attaches the probe to `doc` (its middleware sees every command sent through it). */
export function probeDynamo(doc: DynamoDBDocumentClient): DynamoProbe {
  const totals: ProbeTotals = {
    calls: 0,
    writeCalls: 0,
    itemWrites: 0,
    jobItemWrites: 0,
    conditionChecks: 0,
    reads: 0,
    itemsRead: 0,
    conditionalCheckFailed: 0,
    transactionsCancelled: {},
    errors: {},
  };
  const writesByPartition = new Map<string, number>();
  const conflictsByPartition = new Map<string, number>();
  const refusedWrites = new Map<string, number>();
  const cancelledTransactions = new Map<string, number>();
  let latencies: number[] = [];
  let inFlight = 0;
  let inFlightPeak = 0;
  const bump = (map: Map<string, number> | Record<string, number>, key: string): void => {
    if (map instanceof Map) map.set(key, (map.get(key) ?? 0) + 1);
    else map[key] = (map[key] ?? 0) + 1;
  };

  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String((context as { commandName?: string }).commandName ?? '');
      const input = (args as { input: Record<string, unknown> }).input;
      const keys = writtenKeys(command, input);
      totals.calls += 1;
      inFlight += 1;
      inFlightPeak = Math.max(inFlightPeak, inFlight);
      const started = performance.now();
      try {
        const out = await next(args);
        const output = (out as { output?: { Count?: number; Item?: unknown } }).output;
        if (keys.length > 0) {
          totals.writeCalls += 1;
          for (const k of keys) {
            if (k.check) {
              totals.conditionChecks += 1;
              continue;
            }
            totals.itemWrites += 1;
            bump(writesByPartition, k.pk);
            if (k.sk === 'JOB') {
              totals.jobItemWrites += 1;
              const tenant = /^T#([^#]+)#J#/.exec(k.pk)?.[1] ?? '?';
              bump(writesByPartition, `gsi2:T#${tenant}`);
              bump(writesByPartition, `gsi1:T#${tenant}#S#<status>`);
            }
          }
        } else if (/^(Get|Query|Scan|BatchGet)/.test(command)) {
          totals.reads += 1;
          totals.itemsRead += output?.Count ?? (output?.Item ? 1 : 0);
        }
        return out;
      } catch (err) {
        const name = err instanceof Error ? err.name : 'Error';
        if (name === 'ConditionalCheckFailedException') {
          totals.conditionalCheckFailed += 1;
          if (keys[0]) {
            bump(conflictsByPartition, partitionKind(keys[0].pk));
            bump(refusedWrites, partitionKind(keys[0].pk));
          }
        } else if (name === 'TransactionCanceledException') {
          const reasons = (err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
          const index = reasons.findIndex((r) => r.Code && r.Code !== 'None');
          bump(totals.transactionsCancelled, reasons[index]?.Code ?? 'Unknown');
          const failed = keys[index];
          if (failed) {
            bump(conflictsByPartition, partitionKind(failed.pk));
            bump(cancelledTransactions, partitionKind(failed.pk));
          }
        } else bump(totals.errors, name);
        throw err;
      } finally {
        inFlight -= 1;
        latencies.push(performance.now() - started);
      }
    },
    { step: 'initialize', name: 'belayScaleProbe', priority: 'high' },
  );

  return {
    totals,
    writesByPartition,
    conflictsByPartition,
    refusedWrites,
    cancelledTransactions,
    takeWindow() {
      const out = { latencies, inFlightPeak };
      latencies = [];
      inFlightPeak = inFlight;
      return out;
    },
    inFlight: () => inFlight,
  };
}
