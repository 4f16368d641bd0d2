import { canonicalJson } from '../ledger/canonical.ts';
import { CHAIN_VERSION, linkHash } from '../ledger/chain.ts';
import { ProofMismatch, shownContentHash } from './disclose.ts';
import type { Receipt, ReceiptEntry } from './format.ts';
import { ReceiptSchema } from './schema.ts';
import { keyFingerprint, signatureHolds } from './sign.ts';
import { writesOf } from './writes.ts';

/**
 * Checking a receipt offline, with nothing but the file and a public key: the signature, each
 * entry's content against its hash, the chain from its first entry to the job's head, the job's
 * outline against its entries, and each write with its evidence. Every problem found is
 * reported, each naming the entry it is about.
 */

export interface ReceiptProblem {
  /** The entry the problem is about, when it is about one. */
  entryId?: string;
  message: string;
}

export interface ReceiptVerdict {
  valid: boolean;
  problems: ReceiptProblem[];
  /** What holds but limits what the receipt proves (entries written before the chain existed). */
  notes: string[];
  /** The receipt as read, when it is one. */
  receipt?: Receipt;
  /** Whose key signed it, and whether it is the key the verifier was given. */
  key?: { keyId: string; trusted: boolean };
}

const TERMINAL_ENTRY: Readonly<Record<string, string>> = {
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
};

const short = (hash: string): string => hash.slice(0, 12);

function describe(entry: ReceiptEntry): string {
  const step = typeof entry.content.step === 'string' ? ` ${entry.content.step}` : '';
  return `entry ${entry.entryId} (${entry.type}${step})`;
}

/**
 * Verifies a receipt (parsed JSON). `trustedKey` (PEM) is the key the verifier already trusts:
 * the receipt must be signed by it, not only by the key it embeds.
 *
 * @example
 * const verdict = verifyReceipt(JSON.parse(readFileSync('receipt.json', 'utf8')));
 * if (!verdict.valid) for (const p of verdict.problems) console.log(p.message);
 */
export function verifyReceipt(input: unknown, options: { trustedKey?: string } = {}): ReceiptVerdict {
  const parsed = ReceiptSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    return {
      valid: false,
      problems: [{ message: `not a belay.receipt/1 receipt: ${issue?.message ?? 'unreadable'}${where}` }],
      notes: [],
    };
  }
  const receipt = parsed.data as Receipt;
  const problems: ReceiptProblem[] = [];
  const notes: string[] = [];
  const key = checkSignature(receipt, options.trustedKey, problems);
  if (receipt.chain.algorithm !== CHAIN_VERSION) {
    problems.push({
      message: `the chain is hashed as ${receipt.chain.algorithm}, which this verifier does not know`,
    });
  } else {
    checkEntries(receipt, problems, notes);
    checkJob(receipt, problems);
    checkWrites(receipt, problems, notes);
  }
  return { valid: problems.length === 0, problems, notes, receipt, ...(key ? { key } : {}) };
}

function checkSignature(
  receipt: Receipt,
  trustedKey: string | undefined,
  problems: ReceiptProblem[],
): { keyId: string; trusted: boolean } | undefined {
  const { signature } = receipt;
  let embeddedId: string;
  try {
    embeddedId = keyFingerprint(signature.publicKey);
  } catch {
    problems.push({ message: 'the embedded public key is not a PEM public key' });
    return undefined;
  }
  if (embeddedId !== signature.keyId) {
    problems.push({ message: `the key id ${signature.keyId} is not the embedded key's (${embeddedId})` });
  }
  let key = signature.publicKey;
  if (trustedKey !== undefined) {
    const trustedId = keyFingerprint(trustedKey);
    if (trustedId !== embeddedId) {
      problems.push({ message: `signed by key ${embeddedId}, not by the key given (${trustedId})` });
      return { keyId: embeddedId, trusted: false };
    }
    key = trustedKey;
  }
  if (!signatureHolds(receipt, key)) {
    problems.push({
      message: 'the signature does not match the receipt: it was changed after it was signed',
    });
  }
  return { keyId: embeddedId, trusted: trustedKey !== undefined };
}

function checkEntries(receipt: Receipt, problems: ReceiptProblem[], notes: string[]): void {
  const { job, entries } = receipt;
  const ids = new Set<string>();
  const byHash = new Map<string, ReceiptEntry>();
  for (const entry of entries) {
    const name = describe(entry);
    if (ids.has(entry.entryId)) problems.push({ entryId: entry.entryId, message: `${name} appears twice` });
    ids.add(entry.entryId);
    const c = entry.content;
    if (c.tenantId !== job.tenantId || c.jobId !== job.jobId) {
      problems.push({ entryId: entry.entryId, message: `${name} belongs to another job` });
    }
    if (c.entryId !== entry.entryId || c.type !== entry.type) {
      problems.push({
        entryId: entry.entryId,
        message: `${name} says it is ${String(c.type)} ${String(c.entryId)}`,
      });
    }
    if (entry.hash === undefined) continue;
    byHash.set(entry.hash, entry);
    if (entry.proof === undefined) {
      problems.push({
        entryId: entry.entryId,
        message: `${name} has a hash but nothing to check it with (its salt is gone)`,
      });
      continue;
    }
    try {
      if (linkHash(entry.prevHash, shownContentHash(c, entry.proof)) !== entry.hash) {
        problems.push({
          entryId: entry.entryId,
          message: `${name}: its content does not match its hash (it was changed after it was written)`,
        });
      }
    } catch (err) {
      if (!(err instanceof ProofMismatch)) throw err;
      problems.push({ entryId: entry.entryId, message: `${name}: ${err.message}` });
    }
  }

  const chained = entries.filter((e) => e.hash !== undefined);
  const unchained = entries.filter((e) => e.hash === undefined);
  const firstChained = entries.findIndex((e) => e.hash !== undefined);
  for (const [i, entry] of chained.entries()) {
    const before = chained[i - 1];
    if (entry.prevHash === before?.hash) continue;
    const name = describe(entry);
    if (before === undefined) {
      problems.push({
        entryId: entry.entryId,
        message: `${name} links to an entry before it (${short(entry.prevHash ?? '')}) that is missing`,
      });
    } else if (entry.prevHash === undefined) {
      problems.push({
        entryId: entry.entryId,
        message: `${name} starts a second chain: it links to no entry`,
      });
    } else if (byHash.has(entry.prevHash)) {
      const linked = byHash.get(entry.prevHash) as ReceiptEntry;
      problems.push({
        entryId: entry.entryId,
        message: `${name} links to ${describe(linked)}, not to the entry before it: the chain is forked or reordered`,
      });
    } else {
      problems.push({
        entryId: entry.entryId,
        message: `${name} links to an entry (${short(entry.prevHash)}) that is missing: an entry before it was removed or changed`,
      });
    }
  }
  const last = chained.at(-1);
  if (last !== undefined && job.chainHead !== last.hash) {
    problems.push({
      entryId: last.entryId,
      message: `the job's head (${short(job.chainHead ?? 'none')}) is not the hash of its last entry, ${describe(last)}: entries after it were removed, or the head was changed`,
    });
  } else if (last === undefined && job.chainHead !== undefined) {
    problems.push({ message: `the job's head (${short(job.chainHead)}) is the hash of no entry it shows` });
  }
  if (receipt.chain.length !== chained.length) {
    problems.push({
      message: `the receipt says its chain has ${receipt.chain.length} entries, it shows ${chained.length}`,
    });
  }

  // Entries without a hash: only a job older than the chain has them, all written before its chain began.
  const listed = new Set(receipt.chain.unchained);
  const first = chained[0];
  for (const [i, entry] of entries.entries()) {
    if (entry.hash !== undefined) continue;
    const name = describe(entry);
    const early = firstChained < 0 || i < firstChained;
    const beforeChain =
      first === undefined ||
      (first.type !== 'job-created' && String(entry.content.at) < String(first.content.at));
    if (!listed.has(entry.entryId) || !early || !beforeChain) {
      problems.push({
        entryId: entry.entryId,
        message: `${name} is not in the chain: it was not written by the ledger`,
      });
    }
  }
  if (unchained.length > 0 && problems.every((p) => !listed.has(p.entryId ?? ''))) {
    notes.push(
      `${unchained.length} entr${unchained.length === 1 ? 'y was' : 'ies were'} written before the job's chain began: the signature covers ${unchained.length === 1 ? 'it' : 'them'}, no hash does`,
    );
  }
}

function checkJob(receipt: Receipt, problems: ReceiptProblem[]): void {
  const { job, entries } = receipt;
  const created = entries.find((e) => e.type === 'job-created' && e.hash !== undefined);
  const detail = created?.content.detail;
  if (
    created &&
    detail &&
    typeof detail === 'object' &&
    !Array.isArray(detail) &&
    detail.playbook !== job.playbook
  ) {
    problems.push({
      entryId: created.entryId,
      message: `the job says playbook ${job.playbook}, its job-created entry ${String(detail.playbook)}`,
    });
  }
  const terminal = TERMINAL_ENTRY[job.status];
  const ends = entries.filter((e) => Object.values(TERMINAL_ENTRY).includes(e.type));
  if (terminal !== undefined && !ends.some((e) => e.type === terminal)) {
    problems.push({ message: `the job says ${job.status}, but no ${terminal} entry records it` });
  }
  if (terminal === undefined && ends.length > 0) {
    problems.push({
      entryId: (ends[0] as ReceiptEntry).entryId,
      message: `the job says ${job.status}, but ${describe(ends[0] as ReceiptEntry)} ended it`,
    });
  }
  const completed = entries.filter((e) => e.type === 'step-completed').length;
  if (completed !== job.stepsCompleted) {
    problems.push({
      message: `the job says ${job.stepsCompleted} steps completed, its entries record ${completed}`,
    });
  }
}

function checkWrites(receipt: Receipt, problems: ReceiptProblem[], notes: string[]): void {
  const derived = writesOf(receipt.entries);
  if (canonicalJson(derived) !== canonicalJson(receipt.writes)) {
    problems.push({ message: 'the writes listed are not the ones its entries record' });
  }
  for (const write of derived) {
    const at = `the write of ${write.step} (entry ${write.entryId})`;
    if (Object.keys(write.evidence).length === 0) {
      problems.push({ entryId: write.entryId, message: `${at} has no evidence` });
    }
    if (write.settledBy === 'request' && !write.requests.some((r) => r.status !== undefined)) {
      notes.push(`${at}: no answer to its committing request was seen`);
    }
    if (write.settledBy === 'unobserved')
      notes.push(`${at}: no committing request was recorded (the write guard was off)`);
  }
}

/**
 * Does `later` (a receipt of the same job, issued since) keep every entry `earlier` showed, with
 * the same hash at the same place? What anchors a chain against whoever could rewrite all of it
 * in the table: a receipt kept elsewhere, signed before the rewrite.
 */
export function keepsEarlier(earlier: Receipt, later: Receipt): ReceiptProblem[] {
  if (earlier.job.tenantId !== later.job.tenantId || earlier.job.jobId !== later.job.jobId) {
    return [{ message: `the earlier receipt is of job ${earlier.job.jobId}, not ${later.job.jobId}` }];
  }
  const now = new Map(later.entries.map((e) => [e.entryId, e]));
  const problems: ReceiptProblem[] = [];
  for (const [i, entry] of earlier.entries.entries()) {
    const found = now.get(entry.entryId);
    if (found === undefined)
      problems.push({ entryId: entry.entryId, message: `${describe(entry)} of the earlier receipt is gone` });
    else if (found.hash !== entry.hash) {
      problems.push({
        entryId: entry.entryId,
        message: `${describe(entry)} has another hash than in the earlier receipt: it was rewritten`,
      });
    } else if (later.entries[i]?.entryId !== entry.entryId) {
      problems.push({
        entryId: entry.entryId,
        message: `${describe(entry)} is not where the earlier receipt had it`,
      });
    }
  }
  return problems;
}
