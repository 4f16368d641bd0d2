import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toEntryView } from '../../../lambdas/lib/api/jobs/views.ts';
import { linkEntry, sealEntry } from '../../../lambdas/lib/ledger/chain.ts';
import { type Job, type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';
import { buildReceipt, chainOrder } from '../../../lambdas/lib/receipts/build.ts';
import { createFileSigner } from '../../../lambdas/lib/receipts/file-signer.ts';
import type { Receipt } from '../../../lambdas/lib/receipts/format.ts';
import { keyFingerprint, type ReceiptSigner, signReceipt } from '../../../lambdas/lib/receipts/sign.ts';
import { verifyReceipt } from '../../../lambdas/lib/receipts/verify.ts';

const T = 'tenant-r';
const J = 'job-r';
let dir: string;
let signer: ReceiptSigner;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belay-receipts-'));
  signer = createFileSigner(join(dir, 'keys', 'receipt-key.pem'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let clock = Date.parse('2030-01-01T00:00:00.000Z');
function next(input: Partial<LedgerEntry> & Pick<LedgerEntry, 'type'>, evidence?: LedgerEntry['evidence']) {
  clock += 1000;
  const at = new Date(clock).toISOString();
  const e: LedgerEntry = {
    tenantId: T,
    jobId: J,
    entryId: `${at}-0000-${clock.toString(16).slice(-8)}`,
    cost: { ...ZERO_COST, dynamoWrites: 2 },
    at,
    ...input,
  };
  return sealEntry(evidence === undefined ? e : { ...e, evidence }, evidence);
}

/** A finished job of three steps, the last a write settled by its own request, as the ledger chains it. */
function finishedJob(): { job: Job; entries: LedgerEntry[] } {
  const sealed = [
    next({ type: 'job-created', detail: { playbook: 'shop@1', stepCount: 2, requestHash: 'r' } }),
    next(
      { type: 'step-completed', step: 'fill', stepIndex: 0, detail: { note: 'card 4111 1111 1111 1111' } },
      { filled: true },
    ),
    next({ type: 'step-started', step: 'buy', stepIndex: 1, idempotencyKey: 'k' }),
    next(
      {
        type: 'step-completed',
        step: 'buy',
        stepIndex: 1,
        idempotencyKey: 'k',
        detail: {
          writeGuard: {
            prevented: true,
            observed: true,
            unsafeRequests: 2,
            commits: [
              {
                method: 'POST',
                url: 'http://127.0.0.1:1/orders',
                at: '2030-01-01T00:00:03.500Z',
                status: 303,
                location: '/orders/O-1',
              },
            ],
            background: 1,
          },
        },
        screenshot: {
          key: `tenants/${T}/jobs/${J}/buy.jpg`,
          bytes: 1234,
          sha256: 'ab'.repeat(32),
          contentType: 'image/jpeg',
          reason: 'after-write',
          masked: 1,
          width: 800,
          height: 600,
        },
      },
      { orderId: 'O-1', totalPence: 1299 },
    ),
    next({ type: 'succeeded' }),
  ];
  const entries: LedgerEntry[] = [];
  let head: string | undefined;
  for (const s of sealed) {
    const linked = linkEntry(s, head);
    head = linked.hash;
    entries.push(linked);
  }
  const job = {
    tenantId: T,
    jobId: J,
    playbook: 'shop@1',
    status: 'SUCCEEDED',
    nextStep: 2,
    stepCount: 2,
    createdAt: entries[0]?.at as string,
    finishedAt: entries.at(-1)?.at as string,
    chainHead: head,
  } as Job;
  return { job, entries };
}

async function receiptOf(
  job: Job,
  entries: LedgerEntry[],
  store: Record<string, LedgerEntry['evidence']> = {},
) {
  const unsigned = await buildReceipt({
    job,
    entries,
    evidence: async (e) => store[e.evidenceRef ?? ''],
    view: toEntryView,
    now: new Date('2030-01-02T00:00:00.000Z'),
  });
  return JSON.parse(JSON.stringify(await signReceipt(unsigned, signer))) as Receipt;
}

describe('Function: verifyReceipt', () => {
  it('verifies the receipt of an untouched job, with each write and what committed it', async () => {
    const { job, entries } = finishedJob();
    const receipt = await receiptOf(job, entries);
    const verdict = verifyReceipt(receipt);
    expect(verdict.problems).toEqual([]);
    expect(verdict.valid).toBe(true);
    expect(receipt.chain.length).toBe(5);
    expect(receipt.writes).toEqual([
      {
        step: 'buy',
        stepIndex: 1,
        entryId: entries[3]?.entryId,
        settledBy: 'request',
        requests: [
          {
            method: 'POST',
            url: 'http://127.0.0.1:1/orders',
            at: '2030-01-01T00:00:03.500Z',
            status: 303,
            location: '/orders/O-1',
          },
        ],
        evidence: { orderId: 'O-1', totalPence: 1299 },
        screenshot: { sha256: 'ab'.repeat(32), bytes: 1234 },
      },
    ]);
  });

  it('shows redacted values as the API does, never their salt, and still verifies', async () => {
    const { job, entries } = finishedJob();
    const receipt = await receiptOf(job, entries);
    const fill = receipt.entries[1];
    expect(fill?.content.detail).toEqual({ note: 'card [card ****1111]' });
    expect(JSON.stringify(receipt)).not.toContain('4111 1111 1111 1111');
    expect(fill?.proof && 'hidden' in fill.proof ? Object.keys(fill.proof.hidden) : []).toEqual([
      '/detail/note',
    ]);
    expect(fill?.proof && 'salts' in fill.proof ? fill.proof.salts['/detail/note'] : 'none').toBeUndefined();
    expect(JSON.stringify(receipt)).not.toContain(entries[1]?.hashSalt as string);
    expect(verifyReceipt(receipt).valid).toBe(true);
  });

  it.each([
    ['evidence', (e: LedgerEntry) => ({ ...e, evidence: { orderId: 'O-2', totalPence: 1299 } })],
    ['the time', (e: LedgerEntry) => ({ ...e, at: '2029-01-01T00:00:00.000Z' })],
    [
      'a committing request',
      (e: LedgerEntry) => ({ ...e, detail: { ...e.detail, writeGuard: { commits: [] } } }),
    ],
    [
      'the screenshot hash',
      (e: LedgerEntry) => ({
        ...e,
        screenshot: { ...(e.screenshot as NonNullable<LedgerEntry['screenshot']>), sha256: 'cd'.repeat(32) },
      }),
    ],
  ])('names the entry whose %s was changed in the table', async (_what, change) => {
    const { job, entries } = finishedJob();
    entries[3] = change(entries[3] as LedgerEntry);
    const verdict = verifyReceipt(await receiptOf(job, entries));
    expect(verdict.valid).toBe(false);
    expect(verdict.problems.map((p) => p.entryId)).toContain(entries[3]?.entryId);
    expect(verdict.problems[0]?.message).toMatch(/does not match its hash/);
  });

  it('names the entry whose hash was rewritten to fit, by the next link', async () => {
    const { job, entries } = finishedJob();
    const forged = linkEntry(
      sealEntry({ ...(entries[1] as LedgerEntry), detail: { note: 'other' } }, { filled: true }),
      entries[0]?.hash,
    );
    entries[1] = forged;
    const verdict = verifyReceipt(await receiptOf(job, entries));
    expect(verdict.valid).toBe(false);
    expect(verdict.problems).toContainEqual(
      expect.objectContaining({ entryId: entries[2]?.entryId, message: expect.stringMatching(/missing/) }),
    );
  });

  it('names the entry after one that was deleted, and an entry added outside the ledger', async () => {
    const { job, entries } = finishedJob();
    const stray = next({ type: 'step-completed', step: 'buy', stepIndex: 1 }, { orderId: 'O-3' });
    const { hash: _h, prevHash: _p, hashSalt: _s, contentHash: _c, ...unchained } = stray;
    const tampered = [...entries.slice(0, 2), ...entries.slice(3), unchained];
    const verdict = verifyReceipt(await receiptOf(job, tampered));
    expect(verdict.valid).toBe(false);
    const named = verdict.problems.map((p) => p.entryId);
    expect(named).toContain(entries[3]?.entryId);
    expect(named).toContain(stray.entryId);
  });

  it("finds a job head that is not its last entry's (entries cut off at the end)", async () => {
    const { job, entries } = finishedJob();
    const verdict = verifyReceipt(await receiptOf(job, entries.slice(0, 4)));
    // The head no longer reaches anything: the receipt holds no chain and every entry is unlinked.
    expect(verdict.valid).toBe(false);
    expect(verdict.problems.some((p) => /head/.test(p.message))).toBe(true);
  });

  it('fails a receipt edited after it was signed, and one signed by another key than the one trusted', async () => {
    const { job, entries } = finishedJob();
    const receipt = await receiptOf(job, entries);
    const edited = structuredClone(receipt);
    (edited.writes[0] as { evidence: Record<string, unknown> }).evidence.totalPence = 1;
    const editedVerdict = verifyReceipt(edited);
    expect(editedVerdict.valid).toBe(false);
    expect(editedVerdict.problems.map((p) => p.message)).toContain(
      'the signature does not match the receipt: it was changed after it was signed',
    );

    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const untrusted = verifyReceipt(receipt, { trustedKey: other });
    expect(untrusted.valid).toBe(false);
    expect(untrusted.problems[0]?.message).toMatch(/not by the key given/);
    const trusted = verifyReceipt(receipt, { trustedKey: await signer.publicKey() });
    expect(trusted).toMatchObject({ valid: true, key: { keyId: receipt.signature.keyId, trusted: true } });
  });

  it('says what a receipt of a job older than the chain does not prove, and still checks the rest', async () => {
    const { job, entries } = finishedJob();
    const strip = ({
      hash: _h,
      prevHash: _p,
      hashSalt: _s,
      contentHash: _c,
      ...e
    }: LedgerEntry): LedgerEntry => e;
    // The first two entries were written before the chain existed; the chain began with the third.
    const legacy = [strip(entries[0] as LedgerEntry), strip(entries[1] as LedgerEntry)];
    let head: string | undefined;
    const rest = entries.slice(2).map((e) => {
      const linked = linkEntry(e, head);
      head = linked.hash;
      return linked;
    });
    const verdict = verifyReceipt(await receiptOf({ ...job, chainHead: head }, [...legacy, ...rest]));
    expect(verdict.problems).toEqual([]);
    expect(verdict.notes[0]).toMatch(/2 entries were written before the job's chain began/);
  });

  it('refuses a file that is not a receipt, naming where', () => {
    expect(verifyReceipt({ format: 'other' })).toMatchObject({
      valid: false,
      problems: [{ message: expect.stringMatching(/^not a belay.receipt\/1 receipt/) }],
    });
  });
});

describe('Function: chainOrder', () => {
  it('orders by links, not by key, and leaves out entries of an earlier job with the same id', () => {
    const { job, entries } = finishedJob();
    const earlier = { ...(entries[1] as LedgerEntry), at: '2020-01-01T00:00:00.000Z', hash: 'e'.repeat(64) };
    const swapped = [entries[0], entries[2], entries[1], entries[4], entries[3], earlier] as LedgerEntry[];
    const order = chainOrder(job, swapped);
    expect(order.chain.map((e) => e.entryId)).toEqual(entries.map((e) => e.entryId));
    expect(order.unlinked).toEqual([]);
  });
});

describe('Function: createFileSigner', () => {
  it('creates its key once, readable by its owner only, and signs with it', async () => {
    const path = join(dir, 'keys', 'receipt-key.pem');
    const pem = await signer.publicKey();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await createFileSigner(path).publicKey()).toBe(pem);
    expect(keyFingerprint(pem)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await readFile(path, 'utf8')).toMatch(/BEGIN PRIVATE KEY/);
  });
});
