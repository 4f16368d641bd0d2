/** What the API shows of an agent job's counters (`GET /jobs/{jobId}/ledger`'s `agent`). */
import { describe, expect, it } from 'vitest';
import { agentView } from '../../../lambdas/lib/api/jobs/views.ts';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';

let n = 0;
function entry(
  type: string,
  step: string,
  detail: Record<string, unknown> = {},
  modelTokens = 0,
): LedgerEntry {
  n++;
  return {
    tenantId: 't',
    jobId: 'j',
    seq: n,
    type,
    step,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    detail,
    cost: { ...ZERO_COST, modelTokens },
  } as unknown as LedgerEntry;
}

describe('Function: agentView', () => {
  it('shows nothing for a job without agent steps', () => {
    expect(
      agentView([entry('step-completed', 'search'), entry('step-completed', 'place-order')]),
    ).toBeUndefined();
  });

  it('counts each agent step and the job: a failed replay is no saving, a cached action no model call', () => {
    const entries = [
      // Step a: served from the cache, the attempt failed, then a model chose both actions.
      entry('action-chosen', 'a', { source: 'cache' }),
      entry('step-failed', 'a'),
      entry('action-chosen', 'a', {}, 100),
      entry('action-chosen', 'a', {}, 50),
      entry('step-completed', 'a'),
      // Step b: every action from the cache.
      entry('action-chosen', 'b', { source: 'cache' }),
      entry('action-chosen', 'b', { source: 'cache' }),
      entry('step-completed', 'b'),
    ];
    const view = agentView(entries);
    expect(view?.steps.a).toMatchObject({
      modelCalls: 2,
      cachedActions: 0,
      failedReplayActions: 1,
      usage: 150,
      cache: 'miss',
    });
    expect(view?.steps.b).toMatchObject({
      modelCalls: 0,
      cachedActions: 2,
      failedReplayActions: 0,
      cache: 'hit',
    });
    expect(view?.total).toEqual({
      modelCalls: 2,
      cachedActions: 2,
      heals: 0,
      failedReplayActions: 1,
      usage: 150,
      modelUsd: 0,
    });
  });
});
