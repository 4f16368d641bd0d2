/**
 * Cost per verified completion, checked against a hand-computed example: the report
 * function on its own, and `GET /reports/cost` over the local API server and DynamoDB Local
 * with the same ledgers written through the real ledger.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../../lambdas/lib/api/deps.ts';
import { unlimited } from '../../../lambdas/lib/api/rate-limit.ts';
import {
  buildCostReport,
  isVerifiedCompletion,
  type JobRecord,
} from '../../../lambdas/lib/api/reports/cost.ts';
import { sessionSpans } from '../../../lambdas/lib/api/reports/sessions.ts';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { createLeaseCapacity } from '../../../lambdas/lib/capacity/leases.ts';
import { RATES, RATES_AS_OF } from '../../../lambdas/lib/cost/rates.ts';
import { DEFAULT_SETTINGS, type EngineDeps } from '../../../lambdas/lib/engine/types.ts';
import { createLedger, type Job } from '../../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { unavailableReceiptSigner } from '../../../lambdas/lib/receipts/runtime.ts';
import { startLocalApi } from '../../../local/api/server.ts';
import { checkoutPlaybook } from '../../../playbooks/checkout/index.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { CHECKOUT_INPUTS } from '../../support/fixtures.ts';
import { registryOf } from '../../support/playbooks.ts';
import { call } from '../api/support/http.ts';
import { EXPECTED, JOBS, NOW, records, T } from './example.ts';

function expectHandComputed(report: Record<string, unknown>): void {
  expect(report).toMatchObject({
    jobs: EXPECTED.jobs,
    verifiedCompletions: EXPECTED.verifiedCompletions,
    retries: EXPECTED.retries,
    humanInterventions: EXPECTED.humanInterventions,
    usage: EXPECTED.usage,
    browser: EXPECTED.browser,
    ratesAsOf: '2026-11-01',
  });
  const cost = report.cost as Record<string, number>;
  for (const [k, v] of Object.entries(EXPECTED.cost)) expect(cost[k], k).toBeCloseTo(v, 9);
  expect(report.costPerVerifiedCompletion).toBeCloseTo(EXPECTED.costPerVerifiedCompletion, 9);
}

describe('Function: buildCostReport', () => {
  it('prices the rates the example was computed with (dated 2026-11-01)', () => {
    expect(RATES_AS_OF).toBe('2026-11-01');
    expect(RATES).toMatchObject({
      browserHour: 0.05,
      lambdaRequest: 0.2 / 1e6,
      lambdaGbSecond: 0.0000133334,
      lambdaMemoryGb: 1,
      stateTransition: 0.025 / 1000,
      dynamoWriteUnit: 0.625 / 1e6,
      proxyGb: 4,
      modelMillionTokens: 3,
      humanIntervention: 0.5,
    });
  });

  it('gives the hand-computed figures', () => {
    expectHandComputed(
      buildCostReport({
        tenantId: 't',
        from: T('10:00:00'),
        to: NOW.toISOString(),
        jobs: records('t'),
        now: NOW,
      }) as never,
    );
  });

  it('splits each session into time in steps and idle time', () => {
    const [a, b, c] = records('t');
    const spans = (r: JobRecord | undefined) =>
      sessionSpans(r?.job as Job, r?.entries ?? [], NOW).map((s) => [
        s.sessionId,
        s.seconds,
        s.activeSeconds,
        s.idleSeconds,
      ]);
    expect(spans(a)).toEqual([['s1', 600, 180, 420]]);
    expect(spans(b)).toEqual([
      ['s2', 210, 30, 180],
      ['s3', 90, 0, 90],
    ]);
    expect(spans(c)).toEqual([['s4', 360, 20, 340]]);
  });

  it('counts a verified completion only for a SUCCEEDED job whose finish recorded it', () => {
    const [a] = records('t') as [JobRecord];
    expect(isVerifiedCompletion(a)).toBe(true);
    expect(isVerifiedCompletion({ ...a, entries: a.entries.filter((e) => e.type !== 'succeeded') })).toBe(
      false,
    );
    expect(isVerifiedCompletion({ ...a, job: { ...a.job, status: 'FAILED' } })).toBe(false);
    const none = buildCostReport({
      tenantId: 't',
      from: NOW.toISOString(),
      to: NOW.toISOString(),
      jobs: [],
      now: NOW,
    });
    expect(none.costPerVerifiedCompletion).toBeNull();
    expect(none.cost.total).toBe(0);
  });
});

describe('Route: GET /reports/cost', () => {
  const ddb = useDynamoDb();

  it('answers the hand-computed report for the jobs of the period, of the caller tenant only', async () => {
    let now = new Date(T('10:00:00'));
    const doc = ddb.doc();
    const tableName = ddb.tableName();
    const ledger = createLedger({ doc, tableName, clock: () => now });
    for (const spec of JOBS) {
      now = new Date(spec.createdAt);
      const request = {
        playbook: 'checkout@1',
        inputs: CHECKOUT_INPUTS,
        accounts: { shop: 'a1' },
        approvals: [],
        retryBudget: 3,
      };
      await ledger.createJob('acme', spec.jobId, request, 14);
      await ledger.createJob('other', spec.jobId, request, 14);
      await ledger.transition('acme', spec.jobId, 'RUNNING');
      for (const [type, at, cost, extra] of spec.entries) {
        if (type === 'job-created') continue; // createJob wrote it, with its cost
        now = new Date(at);
        await ledger.append('acme', spec.jobId, { type, cost, ...extra });
      }
      if (spec.finishedAt) {
        now = new Date(spec.finishedAt);
        await ledger.transition('acme', spec.jobId, spec.status);
      } else {
        await ledger.setWait(
          'acme',
          spec.jobId,
          {
            kind: 'approval',
            step: 'place-order',
            stepIndex: 13,
            taskToken: 'tok',
            expiresAt: T('23:00:00'),
            requestedAt: T('10:31:00'),
          },
          'WAITING_APPROVAL',
        );
      }
    }
    // A job of the tenant outside the period.
    now = new Date(T('11:00:00'));
    await ledger.createJob(
      'acme',
      'later',
      {
        playbook: 'checkout@1',
        inputs: CHECKOUT_INPUTS,
        accounts: { shop: 'a1' },
        approvals: [],
        retryBudget: 3,
      },
      14,
    );

    const keys = createApiKeyStore({ doc, tableName });
    const admin = await keys.create('acme', ['admin']);
    const submitter = await keys.create('acme', ['submitter']);
    const deps = {
      engine: {
        ledger,
        clock: () => NOW,
        log: createLogger({ sink: () => undefined }),
        playbooks: registryOf(checkoutPlaybook),
        applications: {},
        capacity: createLeaseCapacity({ doc, tableName }),
        settings: DEFAULT_SETTINGS,
      } as unknown as EngineDeps,
      accounts: { get: async () => null },
      keys,
      rateLimiter: unlimited,
      anonymousRateLimiter: unlimited,
      doc,
      tableName,
      baseUrl: '',
      receipts: unavailableReceiptSigner(),
      maxBodyBytes: 256 * 1024,
      mcpAnswerTenants: new Set(),
      webhooks: { secrets: [], toleranceSeconds: 300 },
      stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:none',
    } as unknown as ApiDeps;
    const server = await startLocalApi({ port: 0, deps });
    try {
      const path = `/reports/cost?from=${encodeURIComponent('2026-11-02T10:00:00Z')}&to=${encodeURIComponent('2026-11-02T10:40:00Z')}`;
      const res = await call(server.url, 'GET', path, { key: admin.apiKey });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ tenantId: 'acme', from: T('10:00:00'), to: T('10:40:00') });
      expectHandComputed(res.json);

      expect((await call(server.url, 'GET', path, { key: submitter.apiKey })).status).toBe(403);
      const backwards = await call(
        server.url,
        'GET',
        '/reports/cost?from=2026-11-02T11:00:00Z&to=2026-11-02T10:00:00Z',
        { key: admin.apiKey },
      );
      expect(backwards.status).toBe(422);
      expect(
        (await call(server.url, 'GET', '/reports/cost?from=yesterday', { key: admin.apiKey })).status,
      ).toBe(400);
      // Another tenant's report has its own jobs only (created, never run: their creation's
      // writes and nothing else: 3 x 2 writes x $0.000000625).
      const other = await keys.create('other', ['admin']);
      const theirs = await call(server.url, 'GET', path, { key: other.apiKey });
      expect(theirs.json).toMatchObject({
        tenantId: 'other',
        jobs: { total: 3, byStatus: { QUEUED: 3 } },
        verifiedCompletions: 0,
        usage: { dynamoWrites: 6, lambdaInvocations: 0, browserSeconds: 0 },
      });
      expect(theirs.json.cost.total).toBeCloseTo(0.00000375, 12);
    } finally {
      await server.stop();
    }
  });
});
