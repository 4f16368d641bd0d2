import { CHAIN_VERSION, entryContent, type JsonValue } from '../ledger/chain.ts';
import type { Evidence, Job, LedgerEntry } from '../ledger/types.ts';
import { disclose } from './disclose.ts';
import { RECEIPT_FORMAT, type ReceiptEntry, type UnsignedReceipt } from './format.ts';
import { writesOf } from './writes.ts';

/** What a receipt is built from: the job, its partition's entries, and how people see an entry. */
export interface ReceiptSource {
  job: Job;
  /** Every entry of the job's partition (`ledger.readPartition`). */
  entries: readonly LedgerEntry[];
  /** An entry's evidence, inline or from the evidence store (`ledger.getEvidence`). */
  evidence(entry: LedgerEntry): Promise<Evidence | undefined>;
  /** The entry as the API shows it (`toEntryView`): the receipt redacts exactly as the API does. */
  view(entry: LedgerEntry): Record<string, unknown>;
  now: Date;
}

/**
 * The job's entries in chain order: from the job's head back along `prevHash` to the chain's
 * first entry. Then what the chain does not reach: entries written before the job's chain began
 * (no hash; put first) and chained entries no link leads to (put last, so a verifier names them).
 * Entries of an earlier job with the same id (older than the job, out of its chain) are left out.
 */
export function chainOrder(
  job: Pick<Job, 'chainHead' | 'createdAt'>,
  entries: readonly LedgerEntry[],
): { unchained: LedgerEntry[]; chain: LedgerEntry[]; unlinked: LedgerEntry[] } {
  const byHash = new Map<string, LedgerEntry>();
  for (const e of entries) if (e.hash !== undefined && !byHash.has(e.hash)) byHash.set(e.hash, e);
  const chain: LedgerEntry[] = [];
  const seen = new Set<LedgerEntry>();
  let at = job.chainHead === undefined ? undefined : byHash.get(job.chainHead);
  while (at !== undefined && !seen.has(at)) {
    seen.add(at);
    chain.push(at);
    at = at.prevHash === undefined ? undefined : byHash.get(at.prevHash);
  }
  chain.reverse();
  const ours = (e: LedgerEntry): boolean => !seen.has(e) && e.at >= job.createdAt;
  return {
    unchained: entries.filter((e) => e.hash === undefined && ours(e)),
    chain,
    unlinked: entries.filter((e) => e.hash !== undefined && ours(e)),
  };
}

/** One entry as the receipt shows it: redacted as the API shows it, with the proof of its hash. */
async function receiptEntry(source: ReceiptSource, entry: LedgerEntry): Promise<ReceiptEntry> {
  const evidence =
    entry.evidence ?? (entry.evidenceRef === undefined ? undefined : await source.evidence(entry));
  const stored = entryContent(entry, evidence);
  const asStored = stored as unknown as LedgerEntry;
  const view = { ...source.view(asStored), tenantId: entry.tenantId, jobId: entry.jobId };
  const out: ReceiptEntry = { entryId: entry.entryId, type: entry.type, content: {} };
  if (entry.hash !== undefined && entry.hashSalt !== undefined) {
    const { content, proof } = disclose(stored, view, entry.hashSalt);
    out.content = content;
    out.proof = proof;
  } else {
    out.content = JSON.parse(JSON.stringify(view)) as Record<string, JsonValue>;
  }
  if (entry.prevHash !== undefined) out.prevHash = entry.prevHash;
  if (entry.hash !== undefined) out.hash = entry.hash;
  return out;
}

/**
 * The job's receipt, unsigned (`signReceipt` signs it). Built from what is stored, as it is:
 * nothing is checked here, so an entry changed in the table makes a receipt that fails to verify
 * and names it, instead of a receipt that leaves it out.
 */
export async function buildReceipt(source: ReceiptSource): Promise<UnsignedReceipt> {
  const { job } = source;
  const { unchained, chain, unlinked } = chainOrder(job, source.entries);
  const entries: ReceiptEntry[] = [];
  for (const entry of [...unchained, ...chain, ...unlinked]) entries.push(await receiptEntry(source, entry));
  return {
    format: RECEIPT_FORMAT,
    issuedAt: source.now.toISOString(),
    job: {
      tenantId: job.tenantId,
      jobId: job.jobId,
      playbook: job.playbook,
      status: job.status,
      createdAt: job.createdAt,
      ...(job.finishedAt ? { finishedAt: job.finishedAt } : {}),
      stepCount: job.stepCount,
      stepsCompleted: job.nextStep,
      ...(job.chainHead ? { chainHead: job.chainHead } : {}),
    },
    chain: {
      algorithm: CHAIN_VERSION,
      length: chain.length,
      unchained: unchained.map((e) => e.entryId),
    },
    entries,
    writes: writesOf(entries),
  };
}
