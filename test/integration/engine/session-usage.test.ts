import { beforeAll, describe, expect, it } from 'vitest';
import { tokenCount } from '../../../lambdas/lib/browser/adapter.ts';
import type { BrowserAdapter, SessionUsage } from '../../../lambdas/lib/browser/types.ts';
import { NO_VOLUMES } from '../../../lambdas/lib/browser/volumes.ts';
import { endJobSessions, releaseJobResources } from '../../../lambdas/lib/engine/cleanup.ts';
import type { EngineDeps } from '../../../lambdas/lib/engine/types.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobRequest, newId } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenantId = newId('tenant');
let ledger: Ledger;

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

/** A browser provider that reports `usage` per session and records what was ended. */
function provider(usage: Record<string, SessionUsage | Error>): BrowserAdapter & { ended: string[] } {
  const ended: string[] = [];
  const unused = async (): Promise<never> => {
    throw new Error('not used here');
  };
  return {
    volumes: NO_VOLUMES,
    ended,
    openSession: unused,
    attach: unused,
    isAlive: unused,
    runningSessions: unused,
    liveViewLink: () => undefined,
    revokeLiveViews: async () => undefined,
    async detach() {},
    async endSession(sessionId) {
      ended.push(sessionId);
    },
    async usage(sessionId) {
      const u = usage[sessionId];
      if (u instanceof Error) throw u;
      return u ?? { proxyBytes: 0, modelTokens: 0 };
    },
  };
}

function deps(browser: BrowserAdapter, released: string[] = []): EngineDeps {
  return {
    ledger,
    browser,
    clock: () => new Date(),
    log: createLogger({ service: 'test', sink: () => undefined }),
    capacity: {
      async release(_tenant: string, jobId: string) {
        released.push(jobId);
      },
    },
  } as unknown as EngineDeps;
}

/** A job holding a shop session and a crm session. */
async function jobWithSessions(): Promise<string> {
  const jobId = newId('job');
  const { job } = await ledger.createJob(tenantId, jobId, jobRequest(), 3);
  const openedAt = new Date().toISOString();
  await ledger.updateJob(tenantId, jobId, {
    expectedVersion: job.version,
    set: {
      sessions: {
        shop: { sessionId: `${jobId}-shop`, openedAt },
        crm: { sessionId: `${jobId}-crm`, openedAt },
      },
    },
  });
  return jobId;
}

describe('Function: tokenCount', () => {
  it.each([
    [1234, 1234],
    [{ total: 50, input: 40, output: 10 }, 50],
    [{ total_tokens: 7 }, 7],
    [{ input: 40, output: 10 }, 50],
    [{}, 0],
    [null, 0],
    ['12', 0],
    [-5, 0],
    [{ input: -3, output: 'x' }, 0],
  ])('reads %j as %i tokens', (tokens, expected) => {
    expect(tokenCount(tokens)).toBe(expected);
  });
});

describe('Function: releaseJobResources', () => {
  it("ends the sessions, recording each one's proxy bytes and model tokens once on the job's cost, and gives the lease back", async () => {
    const jobId = await jobWithSessions();
    const browser = provider({
      [`${jobId}-shop`]: { proxyBytes: 2_048, modelTokens: 120, providerSeconds: 42 },
      [`${jobId}-crm`]: new Error('the provider could not say'),
    });
    const released: string[] = [];
    const job = await ledger.getJob(tenantId, jobId);
    await releaseJobResources(deps(browser, released), job);
    // A second caller (the failure path after a cancel) ends nothing twice and records nothing twice.
    await releaseJobResources(deps(browser, released), await ledger.getJob(tenantId, jobId));

    expect(browser.ended.sort()).toEqual([`${jobId}-crm`, `${jobId}-shop`]);
    expect(released).toEqual([jobId, jobId]);
    const { job: after, entries } = await ledger.readJob(tenantId, jobId);
    const ends = entries.filter((e) => e.type === 'session-ended');
    expect(ends.map((e) => e.sessionId).sort()).toEqual([`${jobId}-crm`, `${jobId}-shop`]);
    const shop = ends.find((e) => e.sessionId === `${jobId}-shop`);
    expect(shop?.detail).toEqual({
      application: 'shop',
      endedBy: 'engine',
      usageReported: true,
      providerSeconds: 42,
    });
    expect(shop?.cost).toMatchObject({ proxyBytes: 2_048, modelTokens: 120, dynamoWrites: 2 });
    const crm = ends.find((e) => e.sessionId === `${jobId}-crm`);
    expect(crm?.detail?.usageReported).toBe(false);
    expect(crm?.cost).toMatchObject({ proxyBytes: 0, modelTokens: 0 });
    expect(after.cost.proxyBytes).toBe(2_048);
    expect(after.cost.modelTokens).toBe(120);
    expect(after.sessions.shop?.endedAt).toBeDefined();
    expect(after.sessions.crm?.endedAt).toBeDefined();
  });
});

describe('Function: endJobSessions', () => {
  it('lists sessions ended earlier without ending or recording them again', async () => {
    const jobId = await jobWithSessions();
    const browser = provider({});
    await endJobSessions(deps(browser), await ledger.getJob(tenantId, jobId));
    const again = await endJobSessions(deps(browser), await ledger.getJob(tenantId, jobId));
    expect(again.map((s) => s.application).sort()).toEqual(['crm', 'shop']);
    expect(browser.ended).toHaveLength(2);
    const { entries } = await ledger.readJob(tenantId, jobId);
    expect(entries.filter((e) => e.type === 'session-ended')).toHaveLength(2);
  });
});
