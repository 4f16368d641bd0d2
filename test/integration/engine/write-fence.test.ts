/**
 * Two attempts of one write that overlap: Step Functions retries a task after a client error
 * or a timeout while the first invocation may still be running. The second attempt finds the
 * first's intent open and probes: the effect is not there yet (the first has not committed),
 * and acting again would commit twice on a site that de-duplicates nothing. The engine's core
 * runs in this process against DynamoDB Local; the site and its browser are a small in-memory
 * stand-in that commits every request it gets (no de-duplication), so two commits are visible.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import type { Step } from '../../../lambdas/lib/playbooks/contract.ts';
import { runStep } from '../../../lambdas/run-step/run-step.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { depsFor, oneWritePlaybook, openIntent, runningJob } from '../../support/in-process.ts';
import { newId } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenantId = newId('tenant');
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

/** A site that commits every request it gets, and whose first request waits at a gate (a slow commit). */
function slowSite() {
  const records: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let requests = 0;
  const submit: Step = {
    id: 'submit',
    title: 'Submit the report',
    kind: 'write',
    app: 'site',
    precondition: async () => ({ ok: true }),
    restore: async () => undefined,
    async run(_page, ctx) {
      requests++;
      if (requests === 1) await gate;
      records.push(ctx.idempotencyKey);
    },
    verify: async (_page, ctx) => (records.includes(ctx.idempotencyKey) ? { submitted: true } : null),
    async probe(_page, ctx) {
      const count = records.filter((k) => k === ctx.idempotencyKey).length;
      if (count === 0) return { status: 'absent' };
      if (count === 1) return { status: 'done', evidence: { submitted: true } };
      return { status: 'duplicate', count, evidence: { submitted: true }, detail: `${count} records` };
    },
  };
  return { records, playbook: oneWritePlaybook(submit), release: () => release() };
}

async function intentWritten(jobId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { entries } = await ledger.readJob(tenantId, jobId);
    if (entries.some((e) => e.type === 'step-started')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the first attempt never wrote its intent');
}

describe('Engine: two attempts of one write that overlap', () => {
  it('does not act while the attempt that owns the write still runs; the write is committed once', {
    timeout: 60_000,
  }, async () => {
    const site = slowSite();
    const deps = depsFor(ledger, site.playbook);
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    const first = runStep(deps, { tenantId, jobId });
    await intentWritten(jobId);
    // The retry starts while the first invocation is still in its action.
    const second = await runStep(deps, { tenantId, jobId });
    expect(second).toMatchObject({ outcome: 'retry', step: 'submit' });
    expect(second.outcome === 'retry' && second.retryAfterSeconds).toBeGreaterThan(0);
    expect(site.records).toHaveLength(0);
    site.release();
    expect(await first).toMatchObject({ outcome: 'finished' });
    expect(site.records).toHaveLength(1);
    const { job, entries } = await ledger.readJob(tenantId, jobId);
    expect(job.nextStep).toBe(1);
    expect(job.retriesUsed).toBe(0);
    expect(entries.filter((e) => e.type === 'reconciled')).toEqual([]);
  });

  it('acts again once the owner of the write has gone silent (its worker died before the effect)', {
    timeout: 60_000,
  }, async () => {
    const site = slowSite();
    site.release();
    const deps = depsFor(ledger, site.playbook);
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    // What a worker killed right after its intent leaves: an owner that beat 30 s ago and never released.
    await openIntent(ledger, tenantId, jobId, {
      attemptId: 'dead-attempt',
      heartbeatAt: new Date(Date.now() - 30_000).toISOString(),
    });
    expect(await runStep(deps, { tenantId, jobId })).toMatchObject({ outcome: 'finished' });
    expect(site.records).toHaveLength(1);
    const { entries } = await ledger.readJob(tenantId, jobId);
    expect(entries.filter((e) => e.type === 'reconciled').map((e) => e.detail?.probe)).toEqual(['absent']);
  });

  it('trusts the probe at once when the owner released the write (its invocation ended)', {
    timeout: 60_000,
  }, async () => {
    const site = slowSite();
    site.release();
    const deps = depsFor(ledger, site.playbook);
    const jobId = await runningJob(ledger, tenantId, 'report@1');
    const now = new Date().toISOString();
    await openIntent(ledger, tenantId, jobId, {
      attemptId: 'ended-attempt',
      heartbeatAt: now,
      releasedAt: now,
    });
    expect(await runStep(deps, { tenantId, jobId })).toMatchObject({ outcome: 'finished' });
    expect(site.records).toHaveLength(1);
  });
});
