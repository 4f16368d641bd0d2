/**
 * The load simulation's conflict figures: ledger writes that lost the optimistic-lock race (from
 * the metrics file), cancelled transactions and refused single writes (from the DynamoDB client),
 * each with the partitions where it happened, so that a note's breakdown adds up to its figure.
 */
import type { Figure } from '../figures.ts';
import type { DynamoProbe } from './probe.ts';

/** `a 3, b 2`, or `none`. */
function listed(counts: Record<string, number> | Map<string, number>): string {
  const entries = counts instanceof Map ? [...counts] : Object.entries(counts);
  return entries.map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
}

/** The three conflict figures of a run. */
export function conflictFigures(
  probe: Pick<DynamoProbe, 'totals' | 'refusedWrites' | 'cancelledTransactions'>,
  ledgerConflicts: Record<string, number>,
): Figure[] {
  const cancelled = probe.totals.transactionsCancelled;
  return [
    {
      label: 'conflicts: StaleCheckpointError',
      value: Object.values(ledgerConflicts).reduce((a, b) => a + b, 0),
      unit: 'writes',
      statistic: 'value',
      runs: 1,
      note: listed(ledgerConflicts),
    },
    {
      label: 'conflicts: TransactionCanceled',
      value: Object.values(cancelled).reduce((a, b) => a + b, 0),
      unit: 'transactions',
      statistic: 'value',
      runs: 1,
      note: `${listed(cancelled)}; by partition: ${listed(probe.cancelledTransactions)}`,
    },
    {
      label: 'conflicts: ConditionalCheckFailed',
      value: probe.totals.conditionalCheckFailed,
      unit: 'writes',
      statistic: 'value',
      runs: 1,
      note: `by partition: ${listed(probe.refusedWrites)}`,
    },
  ];
}
