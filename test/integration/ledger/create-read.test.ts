import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toEntryView } from '../../../lambdas/lib/api/jobs/views.ts';
import {
  createFileEvidenceStore,
  createLedger,
  EvidenceTooLargeError,
  InvalidInputError,
  JobConflictError,
  JobNotFoundError,
  type Ledger,
  type LedgerEntry,
} from '../../../lambdas/lib/ledger/index.ts';
import { registerSecret } from '../../../lambdas/lib/redact.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobRequest, newId, pendingWait } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenant = newId('tenant');
let ledger: Ledger;
let evidenceDir: string;

beforeAll(async () => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
  evidenceDir = await mkdtemp(join(tmpdir(), 'belay-evidence-'));
});

afterAll(async () => {
  await rm(evidenceDir, { recursive: true, force: true });
});

describe('Function: createJob', () => {
  it('creates a QUEUED job at step 0, version 1, with a job-created entry that costs its two writes', async () => {
    const jobId = newId('job');
    const { job, created } = await ledger.createJob(tenant, jobId, jobRequest(), 4);
    expect(created).toBe(true);
    expect(job).toMatchObject({
      tenantId: tenant,
      jobId,
      status: 'QUEUED',
      nextStep: 0,
      stepCount: 4,
      version: 1,
    });
    const { dynamoWrites, ...rest } = job.cost;
    expect(dynamoWrites).toBe(2);
    expect(Object.values(rest).every((v) => v === 0)).toBe(true);
    expect(job.requestHash).toMatch(/^[0-9a-f]{64}$/);
    const { entries } = await ledger.readJob(tenant, jobId);
    expect(entries.map((e) => e.type)).toEqual(['job-created']);
    expect(entries[0]?.cost.dynamoWrites).toBe(2);
  });

  it('returns the existing job (created=false) for the same id and request, in any key order', async () => {
    const jobId = newId('job');
    const first = await ledger.createJob(tenant, jobId, jobRequest(), 2);
    const r = jobRequest();
    const reordered = {
      retryBudget: r.retryBudget,
      approvals: r.approvals,
      accounts: r.accounts,
      inputs: { quantity: 2, sku: 'A-1' },
      playbook: r.playbook,
    };
    const again = await ledger.createJob(tenant, jobId, reordered, 2);
    expect(again.created).toBe(false);
    expect(again.job).toEqual(first.job);
    const { entries } = await ledger.readJob(tenant, jobId);
    expect(entries).toHaveLength(1);
  });

  it('refuses the same id with a different request with JobConflictError naming the job, and changes nothing', async () => {
    const jobId = newId('job');
    const { job } = await ledger.createJob(tenant, jobId, jobRequest(), 2);
    const attempt = ledger.createJob(tenant, jobId, jobRequest({ inputs: { sku: 'B-2' } }), 2);
    await expect(attempt).rejects.toBeInstanceOf(JobConflictError);
    await expect(attempt).rejects.toThrow(jobId);
    expect(await ledger.getJob(tenant, jobId)).toEqual(job);
  });

  it.each([
    ['empty tenant', '', 'job-1'],
    ['tenant with #', 'a#b', 'job-1'],
    ['job id with a slash', 'tenant-1', 'a/b'],
    ['job id of 65 characters', 'tenant-1', 'x'.repeat(65)],
  ])('refuses an invalid id (%s) with InvalidInputError', async (_name, tenantId, jobId) => {
    await expect(ledger.createJob(tenantId, jobId, jobRequest(), 1)).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });
});

describe('Function: readJob', () => {
  it('reads the job and a ledger past 1 MB in one logical Query over several pages, entries in append order', async () => {
    const jobId = newId('job');
    await ledger.createJob(tenant, jobId, jobRequest(), 1);
    const filler = 'x'.repeat(30_000);
    for (let seq = 0; seq < 40; seq++) {
      await ledger.append(tenant, jobId, { type: 'step-started', step: `s${seq}`, detail: { seq, filler } });
    }
    const send = vi.spyOn(ddb.doc(), 'send');
    try {
      const { job, entries } = await ledger.readJob(tenant, jobId);
      const calls = send.mock.calls.map(([command]) => command);
      expect(calls.every((c) => c instanceof QueryCommand)).toBe(true);
      expect(calls.length).toBeGreaterThanOrEqual(2);
      const pks = new Set(calls.map((c) => (c as QueryCommand).input.ExpressionAttributeValues?.[':pk']));
      expect(pks.size).toBe(1);
      expect(job.jobId).toBe(jobId);
      expect(entries).toHaveLength(41);
      expect(entries.slice(1).map((e) => e.detail?.seq)).toEqual([...Array(40).keys()]);
    } finally {
      send.mockRestore();
    }
  });

  it('makes entry ids unique and time-ordered even when many appends share a millisecond', async () => {
    const frozen = new Date();
    const fixed = createLedger({ doc: ddb.doc(), tableName: ddb.tableName(), clock: () => frozen });
    const jobId = newId('job');
    await fixed.createJob(tenant, jobId, jobRequest(), 1);
    for (let seq = 0; seq < 15; seq++) await fixed.append(tenant, jobId, { type: 'reauth', detail: { seq } });
    const { entries } = await fixed.readJob(tenant, jobId);
    expect(new Set(entries.map((e) => e.entryId)).size).toBe(16);
    expect(entries.slice(1).map((e) => e.detail?.seq)).toEqual([...Array(15).keys()]);
  });

  it('reports a missing job as JobNotFoundError for readJob and getJob', async () => {
    await expect(ledger.readJob(tenant, 'no-such-job')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(ledger.getJob(tenant, 'no-such-job')).rejects.toBeInstanceOf(JobNotFoundError);
  });
});

describe('Document client without removeUndefinedValues', () => {
  it('stores jobs, waits, entries and sessions whose optional members are undefined', async () => {
    const strictDoc = DynamoDBDocumentClient.from(ddb.client());
    const strict = createLedger({ doc: strictDoc, tableName: ddb.tableName() });
    const jobId = newId('job');
    await strict.createJob(
      tenant,
      jobId,
      jobRequest({ inputs: { a: 1, b: undefined }, deadline: undefined }),
      2,
    );
    const running = await strict.transition(tenant, jobId, 'RUNNING', {
      entry: { type: 'session-opened', sessionId: undefined },
    });
    await strict.updateJob(tenant, jobId, {
      set: { sessions: { shop: { sessionId: 's-1', profileName: undefined, openedAt: running.updatedAt } } },
    });
    const parked = await strict.setWait(
      tenant,
      jobId,
      { ...pendingWait('review'), reason: undefined },
      'WAITING_REVIEW',
    );
    await strict.clearWait(tenant, jobId, { taskToken: parked.wait?.taskToken });
    const done = await strict.completeStep({
      tenantId: tenant,
      jobId,
      expectedVersion: parked.version + 1,
      stepIndex: 0,
      step: 's0',
      attempt: 1,
      sessionId: undefined,
      evidence: { ok: true },
      cost: { lambdaMs: undefined },
    });
    expect(done).toMatchObject({ nextStep: 1, status: 'RUNNING', inputs: { a: 1 } });
  });
});

describe('Function: append', () => {
  it("masks a tenant's registered secrets in its own entries and failures only, whatever scope writes them", async () => {
    const secret = `pw-${newId('s')}`;
    registerSecret(tenant, secret);
    const other = `${tenant}-other`;
    const texts: Record<string, string> = {};
    for (const t of [tenant, other]) {
      const jobId = newId('job');
      await ledger.createJob(t, jobId, jobRequest(), 1);
      // Written from no tenant's scope (a test, a script): the entry's own tenant decides.
      await ledger.append(t, jobId, { type: 'step-failed', evidence: { page: `typed ${secret}` } });
      await ledger.transition(t, jobId, 'RUNNING');
      await ledger.transition(t, jobId, 'FAILED', { failure: { reason: 'x', message: `saw ${secret}` } });
      const { job, entries } = await ledger.readJob(t, jobId);
      texts[t] = JSON.stringify([job.failure, entries.map((e) => e.evidence)]);
    }
    expect(texts[tenant]).not.toContain(secret);
    expect(texts[tenant]).toContain('[redacted]');
    expect(texts[other]).toContain(`typed ${secret}`);
    expect(texts[other]).toContain(`saw ${secret}`);
  });

  it('stores evidence and detail exactly but for secrets: numbers are masked only where people read them', async () => {
    const jobId = newId('job');
    await ledger.createJob(tenant, jobId, jobRequest(), 1);
    const values = {
      phone: '+4479111234567',
      invoice: '4111 1111 1111 1111',
      iban: 'GB82 WEST 1234 5698 7654 32',
    };
    const entry = await ledger.append(tenant, jobId, {
      type: 'reauth',
      evidence: { password: 'hunter2-secret', note: `paid ${values.invoice}`, signedIn: true, ...values },
      detail: { otp: '909090', action: { name: 'fill', value: values.phone } },
    });
    const raw = await ddb.doc().send(
      new GetCommand({
        TableName: ddb.tableName(),
        Key: { pk: `T#${tenant}#J#${jobId}`, sk: `E#${entry.entryId}` },
      }),
    );
    const stored = JSON.stringify(raw.Item);
    expect(stored).not.toContain('hunter2-secret');
    expect(stored).not.toContain('909090');
    expect(raw.Item?.evidence).toMatchObject({ signedIn: true, note: `paid ${values.invoice}`, ...values });
    expect(raw.Item?.detail?.action?.value).toBe(values.phone);
    // What people read: the API's view of the entry.
    const { entries } = await ledger.readJob(tenant, jobId);
    const shown = JSON.stringify(
      toEntryView(entries.find((e) => e.entryId === entry.entryId) as LedgerEntry),
    );
    for (const v of Object.values(values)) expect(shown).not.toContain(v);
    expect(shown).toContain('[card ****1111]');
    expect(shown).toContain('+[card ****4567]');
  });

  it('refuses an entry for a job that does not exist, writing nothing', async () => {
    const jobId = newId('job');
    await expect(ledger.append(tenant, jobId, { type: 'reauth' })).rejects.toBeInstanceOf(JobNotFoundError);
    const out = await ddb.doc().send(
      new QueryCommand({
        TableName: ddb.tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `T#${tenant}#J#${jobId}` },
      }),
    );
    expect(out.Items).toEqual([]);
  });

  it('stores evidence larger than the inline limit by reference in the evidence store', async () => {
    const store = createFileEvidenceStore(evidenceDir);
    const withStore = createLedger({ doc: ddb.doc(), tableName: ddb.tableName(), evidenceStore: store });
    const jobId = newId('job');
    await withStore.createJob(tenant, jobId, jobRequest(), 1);
    await withStore.transition(tenant, jobId, 'RUNNING');
    const big = { page: 'y'.repeat(20_000), total: 42 };
    await withStore.completeStep({
      tenantId: tenant,
      jobId,
      expectedVersion: 2,
      stepIndex: 0,
      step: 'read-cart',
      attempt: 1,
      evidence: big,
      cost: {},
    });
    const { entries } = await withStore.readJob(tenant, jobId);
    const completed = entries.find((e) => e.type === 'step-completed');
    expect(completed?.evidence).toBeUndefined();
    expect(completed?.evidenceRef).toBe(`file:${tenant}/${jobId}/${completed?.entryId}.json`);
    expect(await withStore.getEvidence(completed!)).toEqual(big);
    const file = join(evidenceDir, tenant, jobId, `${completed?.entryId}.json`);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(big);
  });

  it('refuses too-large evidence with EvidenceTooLargeError when no store is configured, writing nothing', async () => {
    const jobId = newId('job');
    await ledger.createJob(tenant, jobId, jobRequest(), 1);
    const attempt = ledger.append(tenant, jobId, { type: 'reauth', evidence: { page: 'z'.repeat(9000) } });
    await expect(attempt).rejects.toBeInstanceOf(EvidenceTooLargeError);
    const { entries } = await ledger.readJob(tenant, jobId);
    expect(entries).toHaveLength(1);
    expect(existsSync(join(evidenceDir, tenant, jobId))).toBe(false);
  });

  it('refuses an entry whose detail would make an oversized item', async () => {
    const jobId = newId('job');
    await ledger.createJob(tenant, jobId, jobRequest(), 1);
    const attempt = ledger.append(tenant, jobId, { type: 'reauth', detail: { blob: 'q'.repeat(70_000) } });
    await expect(attempt).rejects.toBeInstanceOf(InvalidInputError);
  });
});
