import { maskSecrets } from '../redact.ts';
import { sealEntry } from './chain.ts';
import { EvidenceTooLargeError, InvalidInputError } from './errors.ts';
import { plain } from './items.ts';
import type { LedgerContext } from './store.ts';
import { type Cost, type Evidence, LEDGER_ENTRY_TYPES, type LedgerEntry, ZERO_COST } from './types.ts';

/** A ledger entry as a caller hands it in: the ledger adds tenant, job, entry id and time; cost defaults to zero. */
export type LedgerEntryInput = Omit<LedgerEntry, 'tenantId' | 'jobId' | 'entryId' | 'at' | 'cost'> & {
  cost?: Partial<Cost>;
};

/** Upper bound of a stored entry (DynamoDB's item limit is 400 KB; entries stay far below it). */
export const MAX_ENTRY_BYTES = 64 * 1024;
const EVIDENCE_REF_ALLOWANCE = 1024;

/** A full `Cost` from a partial one; every component must be a finite, non-negative number. */
export function normalizeCost(cost: Partial<Cost> | undefined): Cost {
  const out: Cost = { ...ZERO_COST };
  for (const key of Object.keys(ZERO_COST) as (keyof Cost)[]) {
    const v = cost?.[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new InvalidInputError(`cost.${key}`, 'must be a finite, non-negative number');
    }
    out[key] = v;
  }
  return out;
}

/**
 * Builds the entry to store: assigns its id and time, masks secrets in evidence and detail
 * (registered secrets, secret-named keys, tokens: `maskSecrets`), and moves
 * evidence larger than `maxInlineEvidenceBytes` to the evidence store (the entry then
 * carries `evidenceRef`). Without a store, such evidence is refused with `EvidenceTooLargeError`.
 * The entry is sealed for the hash chain (`sealEntry`); the write links it.
 */
export async function prepareEntry(
  ctx: LedgerContext,
  tenantId: string,
  jobId: string,
  input: LedgerEntryInput,
): Promise<LedgerEntry> {
  if (!(LEDGER_ENTRY_TYPES as readonly string[]).includes(input.type)) {
    throw new InvalidInputError('entry.type', `"${String(input.type)}" is not a ledger entry type`);
  }
  const { evidence, detail, cost, ...rest } = input;
  const entry: LedgerEntry = {
    ...rest,
    tenantId,
    jobId,
    entryId: ctx.nextEntryId(),
    at: ctx.now().toISOString(),
    cost: normalizeCost(cost),
  };
  // Exactly as given but for secrets: a replay types what is recorded, and templates read
  // evidence back. Card-like numbers (a phone, an invoice number, an IBAN) are masked where
  // people read the entry (`api/jobs/views.ts`, the console, logs, notifications), never here.
  if (detail !== undefined) entry.detail = plain(maskSecrets(detail, { tenantId }));
  let offload: string | undefined;
  if (evidence !== undefined) {
    const masked: Evidence = plain(maskSecrets(evidence, { tenantId }));
    const body = JSON.stringify(masked);
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes <= ctx.maxInlineEvidenceBytes) entry.evidence = masked;
    else if (ctx.evidenceStore === undefined)
      throw new EvidenceTooLargeError(bytes, ctx.maxInlineEvidenceBytes);
    else offload = body;
  }
  // Checked before anything goes to the evidence store, so a refused entry leaves nothing behind.
  const size =
    Buffer.byteLength(JSON.stringify(entry), 'utf8') + (offload === undefined ? 0 : EVIDENCE_REF_ALLOWANCE);
  if (size > MAX_ENTRY_BYTES) {
    throw new InvalidInputError(
      'entry',
      `${size} bytes exceeds the limit of ${MAX_ENTRY_BYTES} bytes; shorten detail`,
    );
  }
  if (offload !== undefined && ctx.evidenceStore !== undefined) {
    entry.evidenceRef = await ctx.evidenceStore.put(`${tenantId}/${jobId}/${entry.entryId}.json`, offload);
  }
  // The chain's hash covers the evidence as stored, inline or in the evidence store.
  return sealEntry(entry, offload === undefined ? entry.evidence : (JSON.parse(offload) as Evidence));
}

/** The evidence of an entry: inline, or loaded from the evidence store by its reference. */
export async function loadEvidence(ctx: LedgerContext, entry: LedgerEntry): Promise<Evidence | undefined> {
  if (entry.evidence !== undefined) return entry.evidence;
  if (entry.evidenceRef === undefined) return undefined;
  if (ctx.evidenceStore === undefined) {
    throw new InvalidInputError(
      'evidenceRef',
      'the entry refers to an evidence store but none is configured',
    );
  }
  return JSON.parse(await ctx.evidenceStore.get(entry.evidenceRef)) as Evidence;
}
