import { beforeAll, describe, expect, it } from 'vitest';
import { createLedger, type Ledger, StaleCheckpointError } from '../../../lambdas/lib/ledger/index.ts';
import type { JobRequest } from '../../../lambdas/lib/ledger/types.ts';
import { observeLedger } from '../../../lambdas/lib/metrics/ledger-metrics.ts';
import type { MetricName } from '../../../lambdas/lib/metrics/names.ts';
import type { MetricsRecorder } from '../../../lambdas/lib/metrics/recorder.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';

/** The ledger's writes as metrics, against the real ledger on DynamoDB Local. */

const ddb = useDynamoDb();
const tenant = 'tenant-metrics';

type Recorded = { name: MetricName; value: number; dimensions: Record<string, string> };

function memoryRecorder(): MetricsRecorder & { recorded: Recorded[]; take(): Recorded[] } {
  const recorded: Recorded[] = [];
  return {
    recorded,
    add: (name, value, dimensions) => recorded.push({ name, value, dimensions: { ...dimensions } }),
    flush: () => undefined,
    take: () => recorded.splice(0),
  };
}

const request: JobRequest = {
  playbook: 'checkout@1',
  inputs: {},
  accounts: { shop: 'acct-1' },
  approvals: [],
  retryBudget: 3,
};

let metrics: ReturnType<typeof memoryRecorder>;
let ledger: Ledger;
let now = new Date('2026-12-01T10:00:00.000Z');

beforeAll(() => {
  metrics = memoryRecorder();
  // The ledger and the observer on one clock, moved by the test.
  const clock = (): Date => now;
  ledger = observeLedger(createLedger({ doc: ddb.doc(), tableName: ddb.tableName(), clock }), metrics, {
    clock,
  });
});

const later = (seconds: number): void => {
  now = new Date(now.getTime() + seconds * 1000);
};

const names = (recorded: Recorded[]): MetricName[] => recorded.map((r) => r.name);

describe('Function: observeLedger', () => {
  it("publishes a job's life as it is written, once, with bounded dimensions", async () => {
    const jobId = 'job-life';
    await ledger.createJob(tenant, jobId, request, 2);
    expect(metrics.take()).toEqual([
      { name: 'JobsSubmitted', value: 1, dimensions: { Playbook: 'checkout@1' } },
    ]);
    // The same submission again is no new job.
    await ledger.createJob(tenant, jobId, request, 2);
    expect(metrics.take()).toEqual([]);

    later(30);
    const running = await ledger.transition(tenant, jobId, 'RUNNING', { from: ['QUEUED'] });
    expect(metrics.take()).toEqual([
      { name: 'JobsStarted', value: 1, dimensions: { Playbook: 'checkout@1' } },
      { name: 'QueueWait', value: 30, dimensions: { Playbook: 'checkout@1' } },
    ]);
    // A transition to where the job already is writes nothing and counts nothing.
    later(1);
    await ledger.transition(tenant, jobId, 'RUNNING');
    expect(metrics.take()).toEqual([]);

    const step = {
      tenantId: tenant,
      jobId,
      stepIndex: 0,
      step: 'open-cart',
      attempt: 1,
      evidence: { ok: true },
      cost: { lambdaInvocations: 1, lambdaMs: 250, browserSeconds: 2, dynamoWrites: 2, stateTransitions: 2 },
    };
    const done = await ledger.completeStep({ ...step, expectedVersion: running.version });
    const completed = metrics.take();
    expect(names(completed)).toEqual(['CostUsd', 'BrowserActiveSeconds', 'StepsCompleted', 'StepDuration']);
    expect(completed.find((r) => r.name === 'StepDuration')?.value).toBe(250);
    expect(completed.find((r) => r.name === 'CostUsd')?.value).toBeGreaterThan(0);

    // A second worker with the old version loses the race: a conflict, and no second completion.
    await expect(ledger.completeStep({ ...step, expectedVersion: running.version })).rejects.toBeInstanceOf(
      StaleCheckpointError,
    );
    expect(metrics.take()).toEqual([
      { name: 'LedgerConflicts', value: 1, dimensions: { Operation: 'completeStep' } },
    ]);

    await ledger.setWait(
      tenant,
      jobId,
      {
        kind: 'approval',
        step: 'place-order',
        stepIndex: 1,
        taskToken: 'token-1',
        expiresAt: '2026-12-08T10:00:00.000Z',
        requestedAt: now.toISOString(),
      },
      'WAITING_APPROVAL',
      { type: 'approval-requested', step: 'place-order' },
    );
    expect(metrics.take()).toEqual([
      { name: 'HumanWaitsRequested', value: 1, dimensions: { Kind: 'approval' } },
    ]);
    later(120);
    await ledger.clearWait(tenant, jobId, { taskToken: 'token-1' });
    expect(metrics.take()).toEqual([
      { name: 'HumanWaitDuration', value: 120, dimensions: { Kind: 'approval' } },
    ]);
    // Nothing to clear: nothing to time.
    await ledger.clearWait(tenant, jobId, { taskToken: 'token-1' });
    expect(metrics.take()).toEqual([]);

    await ledger.completeStep({
      ...step,
      step: 'place-order',
      stepIndex: 1,
      expectedVersion: done.version + 2,
    });
    metrics.take();
    later(9);
    await ledger.transition(tenant, jobId, 'SUCCEEDED', {
      entry: { type: 'succeeded', cost: { lambdaInvocations: 1, stateTransitions: 3, dynamoWrites: 2 } },
    });
    const succeeded = metrics.take();
    expect(names(succeeded)).toEqual(['CostUsd', 'JobsSucceeded', 'JobDuration']);
    expect(succeeded.find((r) => r.name === 'JobDuration')?.value).toBe(160);
    // Finish retried after the job succeeded: no second completion.
    later(1);
    await ledger.transition(tenant, jobId, 'SUCCEEDED', { entry: { type: 'succeeded' } });
    expect(metrics.take()).toEqual([]);
  });

  it('counts failures by reason, appended entries by their playbook and re-sign-ins by application', async () => {
    const jobId = 'job-fail';
    await ledger.createJob(tenant, jobId, { ...request, playbook: 'crm-billing-sync@1' }, 3);
    await ledger.transition(tenant, jobId, 'RUNNING');
    metrics.take();
    await ledger.append(tenant, jobId, {
      type: 'reauth',
      step: 's',
      detail: { application: 'crm' },
      cost: { dynamoWrites: 2 },
    });
    expect(metrics.take()).toEqual([
      { name: 'CostUsd', value: expect.any(Number), dimensions: { Playbook: 'crm-billing-sync@1' } },
      { name: 'ReSignIns', value: 1, dimensions: { Application: 'crm' } },
    ]);
    await ledger.transition(tenant, jobId, 'FAILED', {
      failure: { reason: 'retry-budget-exhausted', message: 'no' },
      entry: { type: 'failed', detail: { reason: 'retry-budget-exhausted', message: 'no' } },
    });
    expect(metrics.take()).toEqual([
      {
        name: 'JobsFailed',
        value: 1,
        dimensions: { Playbook: 'crm-billing-sync@1', Reason: 'retry-budget-exhausted' },
      },
    ]);
  });

  it("counts an agent step's model decisions off its action entries, and its agent probe's answers", async () => {
    const jobId = 'job-agent';
    await ledger.createJob(tenant, jobId, { ...request, playbook: 'crm-contact-agent@1' }, 3);
    await ledger.transition(tenant, jobId, 'RUNNING');
    metrics.take();
    for (const type of ['action-chosen', 'action-healed', 'action-refused', 'probe-answered'] as const) {
      await ledger.append(tenant, jobId, { type, step: 'update-contact', detail: { n: 1 } });
    }
    expect(metrics.take().filter((m) => m.name === 'ModelCalls')).toEqual(
      Array(4).fill({ name: 'ModelCalls', value: 1, dimensions: { Playbook: 'crm-contact-agent@1' } }),
    );
  });

  it('counts an action the action cache served as no model call, and as a cache hit once its step verified', async () => {
    const jobId = 'job-agent-cached';
    await ledger.createJob(tenant, jobId, { ...request, playbook: 'crm-contact-agent@1' }, 3);
    await ledger.transition(tenant, jobId, 'RUNNING');
    metrics.take();
    for (let n = 0; n < 3; n++) {
      await ledger.append(tenant, jobId, {
        type: 'action-chosen',
        step: 'update-contact',
        detail: { source: 'cache' },
      });
    }
    await ledger.append(tenant, jobId, { type: 'action-healed', step: 'update-contact', detail: {} });
    const named = (name: string) => metrics.take().filter((m) => m.name === name);
    expect(named('ModelCalls')).toEqual([
      { name: 'ModelCalls', value: 1, dimensions: { Playbook: 'crm-contact-agent@1' } },
    ]);
    await ledger.append(tenant, jobId, {
      type: 'step-completed',
      step: 'update-contact',
      detail: { agent: { modelCalls: 1, cachedActions: 3, heals: 1, cache: 'healed' } },
    });
    expect(named('ModelCacheHits')).toEqual([
      { name: 'ModelCacheHits', value: 3, dimensions: { Playbook: 'crm-contact-agent@1' } },
    ]);
  });
});
