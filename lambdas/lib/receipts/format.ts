import type { DigestTree, JsonValue } from '../ledger/chain.ts';

/**
 * A job's receipt: its ledger entries as people see them (redacted as the API shows them), each
 * with what checks its hash against what is stored, the chain that links them, each write's
 * committing request, evidence and screenshot hash, and a signature over all of it. Versioned
 * JSON that `belay receipt verify` checks offline (`verify.ts`).
 */

/** The receipt format this code writes and reads. */
export const RECEIPT_FORMAT = 'belay.receipt/1';

/** The only signature algorithm: ECDSA on P-256 over SHA-256 (KMS `ECC_NIST_P256` + `ECDSA_SHA_256`). */
export const SIGNATURE_ALGORITHM = 'ECDSA_P256_SHA256';

/**
 * How an entry's content is checked against its hash. Nothing redacted: the entry's `salt`,
 * from which every value's salt is derived. Something redacted: the salt of each value shown
 * (by JSON Pointer) and, for each value redacted, its digest (or the digests of its parts).
 */
export type EntryProof =
  | { salt: string }
  | { salts: Record<string, string>; hidden: Record<string, DigestTree> };

export interface ReceiptEntry {
  entryId: string;
  type: string;
  /** The entry as people see it: the API's redaction, evidence inline. */
  content: Record<string, JsonValue>;
  /** Absent on an entry written before the chain existed (it is listed in `chain.unchained`). */
  proof?: EntryProof;
  prevHash?: string;
  hash?: string;
}

/** A request that committed a write, as the write guard saw it. */
export interface CommittingRequest {
  method: string;
  /** Origin and path (never the query). */
  url: string;
  at: string;
  status?: number;
  /** Where a redirect answer sent the page (path only). */
  location?: string;
  /** The answer's media type. */
  contentType?: string;
  /** The start of the answer's body as text, redacted (a few hundred bytes at most). */
  excerpt?: string;
  /** No answer came: the connection failed. */
  failed?: true;
}

/**
 * How a write was settled. `request`: its own committing request, seen by the write guard, and
 * its verify's evidence. `probe`: an earlier attempt acted and the probe found its effect in the
 * application. `person`: a reviewer said it was done. `already-satisfied`: the state it sets
 * already held, so the job wrote nothing. `unobserved`: verified with no request recorded (the
 * write guard was off).
 */
export type SettledBy = 'request' | 'probe' | 'person' | 'already-satisfied' | 'unobserved';

export interface ReceiptWrite {
  step: string;
  stepIndex?: number;
  /** The `step-completed` entry that recorded it. */
  entryId: string;
  settledBy: SettledBy;
  /** The requests that committed it: the completing attempt's, or (probe, person) the acting attempt's, when it recorded them. */
  requests: CommittingRequest[];
  /** The entry that recorded `requests` when it is not the completion (the attempt's `step-unconfirmed`). */
  requestsEntryId?: string;
  /** The verify's (or probe's) evidence, as shown. */
  evidence: Record<string, JsonValue>;
  /** The screenshot taken when the write was verified: its sha256 and size. */
  screenshot?: { sha256: string; bytes: number };
}

export interface ReceiptSignature {
  algorithm: typeof SIGNATURE_ALGORITHM;
  /** `sha256:<hex>` of the public key (DER SubjectPublicKeyInfo). */
  keyId: string;
  /** The public key, PEM (SPKI). */
  publicKey: string;
  /** The DER ECDSA signature over the canonical JSON of the receipt without `signature`, base64. */
  value: string;
}

export interface Receipt {
  format: typeof RECEIPT_FORMAT;
  issuedAt: string;
  job: {
    tenantId: string;
    jobId: string;
    playbook: string;
    status: string;
    createdAt: string;
    finishedAt?: string;
    stepCount: number;
    stepsCompleted: number;
    /** The hash of the job's last entry, as the job item holds it. */
    chainHead?: string;
  };
  chain: {
    /** The hashing of `lambdas/lib/ledger/chain.ts`. */
    algorithm: string;
    /** Entries in the chain. */
    length: number;
    /** Entries written before the job's chain began (a job older than the chain). */
    unchained: string[];
  };
  /** Unchained entries first, then the chain from its first entry to the head. */
  entries: ReceiptEntry[];
  writes: ReceiptWrite[];
  signature: ReceiptSignature;
}

/** A receipt before it is signed. */
export type UnsignedReceipt = Omit<Receipt, 'signature'>;
