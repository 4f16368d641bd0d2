import type { JsonValue } from '../ledger/chain.ts';
import type { CommittingRequest, ReceiptEntry, ReceiptWrite, SettledBy } from './format.ts';

/**
 * A receipt's writes, read from its entries: each `step-completed` entry of a write step (one
 * with an idempotency key) with what committed it. The builder writes them with this function
 * and the verifier reads them again with it from the entries it checked, so the summary can say
 * nothing the chained entries do not.
 */

type Json = Record<string, JsonValue>;

const asObject = (v: JsonValue | undefined): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;

/** The committing requests an entry's write guard report lists. */
function commitsOf(content: Json): CommittingRequest[] | undefined {
  const guard = asObject(asObject(content.detail)?.writeGuard);
  const commits = guard?.commits;
  if (!Array.isArray(commits)) return undefined;
  return commits.flatMap((c) => {
    const r = asObject(c);
    if (!r || typeof r.method !== 'string' || typeof r.url !== 'string' || typeof r.at !== 'string')
      return [];
    const request: CommittingRequest = { method: r.method, url: r.url, at: r.at };
    if (typeof r.status === 'number') request.status = r.status;
    if (typeof r.location === 'string') request.location = r.location;
    if (typeof r.contentType === 'string') request.contentType = r.contentType;
    if (typeof r.excerpt === 'string') request.excerpt = r.excerpt;
    if (r.failed === true) request.failed = true;
    return [request];
  });
}

function settledBy(content: Json, commits: CommittingRequest[] | undefined): SettledBy {
  const evidence = asObject(content.evidence) ?? {};
  if (asObject(content.detail)?.alreadySatisfied === true) return 'already-satisfied';
  if (evidence.reconciled === true) return typeof evidence.reviewedBy === 'string' ? 'person' : 'probe';
  return commits !== undefined ? 'request' : 'unobserved';
}

/**
 * The attempt whose write a probe (or a person) found: the last `step-unconfirmed` of the step
 * that recorded requests, unless an attempt failed or was found absent after it (then the one
 * that acted last recorded nothing: it died before its entry).
 */
function actingAttempt(before: readonly ReceiptEntry[], step: string): ReceiptEntry | undefined {
  for (let i = before.length - 1; i >= 0; i--) {
    const e = before[i] as ReceiptEntry;
    if (e.content.step !== step) continue;
    if (e.type === 'step-failed' || e.type === 'reconciled' || e.type === 'step-completed') return undefined;
    if (e.type === 'step-unconfirmed') return (commitsOf(e.content)?.length ?? 0) > 0 ? e : undefined;
  }
  return undefined;
}

/** The writes of a job, from its entries in order. */
export function writesOf(entries: readonly ReceiptEntry[]): ReceiptWrite[] {
  const writes: ReceiptWrite[] = [];
  for (const [i, entry] of entries.entries()) {
    const c = entry.content;
    if (entry.type !== 'step-completed' || typeof c.idempotencyKey !== 'string' || typeof c.step !== 'string')
      continue;
    const commits = commitsOf(c);
    const settled = settledBy(c, commits);
    const write: ReceiptWrite = {
      step: c.step,
      ...(typeof c.stepIndex === 'number' ? { stepIndex: c.stepIndex } : {}),
      entryId: entry.entryId,
      settledBy: settled,
      requests: commits ?? [],
      evidence: asObject(c.evidence) ?? {},
    };
    if (settled === 'probe' || settled === 'person') {
      const acted = actingAttempt(entries.slice(0, i), c.step);
      if (acted) {
        write.requests = commitsOf(acted.content) ?? [];
        write.requestsEntryId = acted.entryId;
      }
    }
    const shot = asObject(c.screenshot);
    if (shot && typeof shot.sha256 === 'string' && typeof shot.bytes === 'number') {
      write.screenshot = { sha256: shot.sha256, bytes: shot.bytes };
    }
    writes.push(write);
  }
  return writes;
}
