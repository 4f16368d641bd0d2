/**
 * The checkpoint ledger: job items and their append-only entries in one DynamoDB table.
 * See `ledger.ts` for the API and `schema.ts` for the key layout.
 */
export type { LedgerEntryInput } from './entries.ts';
export { MAX_ENTRY_BYTES, normalizeCost } from './entries.ts';
export * from './errors.ts';
export { createFileEvidenceStore, type EvidenceStore } from './evidence-store.ts';
export type { CompleteStepInput, JobUpdate } from './job-writes.ts';
export { MAX_REQUEST_BYTES } from './jobs.ts';
export { createLedger, type Ledger, type LedgerDeps } from './ledger.ts';
export type { JobPage, ListJobsOptions, OpenJobRef } from './list.ts';
export * from './schema.ts';
export type { WaitingStatus } from './status.ts';
export { createLedgerTable } from './table.ts';
export type { ClearWaitOptions, TransitionOptions } from './transitions.ts';
export { translateError } from './translate.ts';
export * from './types.ts';
