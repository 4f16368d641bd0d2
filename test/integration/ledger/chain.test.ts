/**
 * The hash chain on DynamoDB Local, with two workers that each keep their own idea of the head:
 * an append moves the head without moving the version, and the fenced write of the other worker
 * still lands (linked after it); appends racing each other never fork the chain; a write fenced
 * on an old version is still stale; a job written before the chain existed starts one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toEntryView } from '../../../lambdas/lib/api/jobs/views.ts';
import { createLedger, type Ledger, StaleCheckpointError } from '../../../lambdas/lib/ledger/index.ts';
import { jobPk } from '../../../lambdas/lib/ledger/keys.ts';
import { buildReceipt, chainOrder } from '../../../lambdas/lib/receipts/build.ts';
import { createFileSigner } from '../../../lambdas/lib/receipts/file-signer.ts';
import { signReceipt } from '../../../lambdas/lib/receipts/sign.ts';
import { verifyReceipt } from '../../../lambdas/lib/receipts/verify.ts';
import { createDocumentClient } from '../../../local/dynamodb.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobIn } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenant = 'tenant-chain';
let ledger: Ledger;
let rivalDoc: DynamoDBDocumentClient;
let rival: Ledger;

let keyDir: string;

beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), 'belay-chain-'));
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
  rivalDoc = createDocumentClient(ddb.endpoint());
  rival = createLedger({ doc: rivalDoc, tableName: ddb.tableName() });
});
afterAll(async () => {
  rivalDoc.destroy();
  await rm(keyDir, { recursive: true, force: true });
});

const note = (n: number) => ({ type: 'probe-answered' as const, detail: { n }, cost: { dynamoWrites: 2 } });

async function chainOf(jobId: string) {
  const { job, entries } = await ledger.readPartition(tenant, jobId);
  return { job, entries, order: chainOrder(job, entries) };
}

describe('Ledger: the hash chain', () => {
  it('lets a fenced write land after an append that moved the head, linked after it', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    // The first worker knows the head (it read the job); the rival appends behind its back.
    await ledger.readJob(tenant, job.jobId);
    const appended = await rival.append(tenant, job.jobId, note(1));
    const after = await ledger.updateJob(tenant, job.jobId, {
      expectedVersion: job.version,
      set: { retriesUsed: 1 },
      entry: { type: 'step-failed', step: 's', detail: { reason: 'x' }, cost: { dynamoWrites: 2 } },
    });
    expect(after.version).toBe(job.version + 1);
    const { entries, order } = await chainOf(job.jobId);
    const failed = entries.find((e) => e.type === 'step-failed');
    expect(failed?.prevHash).toBe(appended.hash);
    expect(after.chainHead).toBe(failed?.hash);
    expect(order.chain).toHaveLength(entries.length);
    expect(order.unlinked).toEqual([]);
  });

  it('is stale as before when the version moved, whatever the head', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    await rival.updateJob(tenant, job.jobId, {
      expectedVersion: job.version,
      set: { retriesUsed: 1 },
      entry: note(2),
    });
    await expect(
      ledger.updateJob(tenant, job.jobId, {
        expectedVersion: job.version,
        set: { retriesUsed: 2 },
        entry: note(3),
      }),
    ).rejects.toBeInstanceOf(StaleCheckpointError);
    const { entries, order } = await chainOf(job.jobId);
    expect(entries.filter((e) => e.type === 'probe-answered')).toHaveLength(1);
    expect(order.chain).toHaveLength(entries.length);
  });

  it('never forks under appends racing from two workers', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? ledger : rival).append(tenant, job.jobId, note(i))),
    );
    const { entries, order } = await chainOf(job.jobId);
    expect(entries.filter((e) => e.type === 'probe-answered')).toHaveLength(8);
    const prevs = entries.map((e) => e.prevHash ?? 'first');
    expect(new Set(prevs).size).toBe(entries.length);
    expect(order.chain).toHaveLength(entries.length);
    expect(order.chain[0]?.type).toBe('job-created');
  });

  it('starts the chain of a job written before it existed, and its receipt says which entries are unchained', async () => {
    const job = await jobIn(ledger, tenant, 'RUNNING');
    const doc = ddb.doc();
    const table = ddb.tableName();
    // As the ledger wrote jobs and entries before the chain: no head, no hashes.
    await doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: jobPk(tenant, job.jobId), sk: 'JOB' },
        UpdateExpression: 'REMOVE chainHead',
      }),
    );
    const before = (await ledger.readPartition(tenant, job.jobId)).entries;
    for (const e of before) {
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: jobPk(tenant, job.jobId), sk: `E#${e.entryId}` },
          UpdateExpression: 'REMOVE #h, prevHash, contentHash, hashSalt',
          ExpressionAttributeNames: { '#h': 'hash' },
        }),
      );
    }
    // A worker that still remembers the old head is refused once and links after what is there.
    const first = await rival.append(tenant, job.jobId, note(1));
    const second = await ledger.append(tenant, job.jobId, note(2));
    expect(first.prevHash).toBeUndefined();
    expect(second.prevHash).toBe(first.hash);

    const { job: now, entries } = await ledger.readPartition(tenant, job.jobId);
    const receipt = await signReceipt(
      await buildReceipt({
        job: now,
        entries,
        evidence: async () => undefined,
        view: toEntryView,
        now: new Date(),
      }),
      createFileSigner(join(keyDir, 'receipt-key.pem')),
    );
    expect(receipt.chain.unchained).toEqual(before.map((e) => e.entryId));
    const verdict = verifyReceipt(JSON.parse(JSON.stringify(receipt)));
    expect(verdict.problems).toEqual([]);
    expect(before.length).toBeGreaterThan(0);
    expect(verdict.notes[0]).toMatch(
      new RegExp(`^${before.length} entr(y was|ies were) written before the job's chain began`),
    );
  });
});
