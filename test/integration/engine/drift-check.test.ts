/**
 * The drift check (`mode: 'check'`), through the whole local stack against the demo shop: the
 * playbook runs read-only up to each write's commit, approvals do not apply, and the shop commits
 * nothing. After the shop's layout changes, the check ends at the first step whose page is not
 * as the playbook expects, again with nothing committed, and tells people it turned red once
 * (not again at the next red check); the playbook's health lists the checks, newest first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { recentChecks } from '../../../lambdas/lib/api/checks/views.ts';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import { startScheduledCheck } from '../../../lambdas/start-check/start-check.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_INPUTS, CHECKOUT_STEPS, PERSON, TENANT } from '../../support/fixtures.ts';
import { diagnose, waitForJob } from '../../support/jobs.ts';
import { ofType } from '../../support/records.ts';

const engine = useEngineStack();

/** The `Belay Check Failed` events on the local bus so far. */
const redEvents = () =>
  engine().stack.events.accepted.filter((e) => e['detail-type'] === 'Belay Check Failed');

async function check(jobId: string) {
  const e = engine();
  await submitJob(
    e.api,
    PERSON,
    {
      jobId,
      playbook: 'checkout@1',
      inputs: CHECKOUT_INPUTS,
      accounts: { shop: 'acct_demo_shop' },
      mode: 'check',
    },
    undefined,
  );
  return waitForJob(e, jobId, ({ job }) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status), {
    timeoutMs: 240_000,
    what: 'the end of the check',
  });
}

/** What the shop committed (its orders), and the order posts it received. */
async function shopWrites(): Promise<{ committed: number; orderPosts: number }> {
  const e = engine();
  const log = await e.shop.requests();
  return { committed: (await e.shop.writes()).count, orderPosts: log.postsByPath['/orders'] ?? 0 };
}

describe.sequential('Engine: a drift check', () => {
  it('checks every step of checkout@1 up to the order, with no approval asked and nothing committed', {
    timeout: 300_000,
  }, async () => {
    await engine().shop.clearRequests();
    const before = await shopWrites();
    const { job, entries } = await check('drift-ok');
    expect(job.status, await diagnose(engine(), 'drift-ok')).toBe('SUCCEEDED');
    const done = ofType(entries, 'step-completed');
    expect(done.map((x) => x.step)).toEqual([...CHECKOUT_STEPS]);
    expect(done.every((x) => (x.detail?.check as { result?: string })?.result === 'ok')).toBe(true);
    // The order is checked up to its click (the button is there), never placed.
    expect(done.at(-1)?.evidence).toEqual({ checked: 'up-to-commit' });
    expect(ofType(entries, 'approval-requested')).toEqual([]);
    expect(ofType(entries, 'step-started')).toEqual([]);
    expect(await shopWrites()).toEqual(before);
  });

  it('ends at the first step whose page changed after the shop changed its layout, committing nothing', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    await e.shop.setFaults({ changedLayout: true });
    try {
      await e.shop.clearRequests();
      const before = await shopWrites();
      const { job, entries } = await check('drift-layout');
      expect(job.status).toBe('FAILED');
      expect(job.failure?.reason).toBe('drift-found');
      const [finding] = ofType(entries, 'step-checked');
      expect(finding?.detail?.result).toMatch(/^(layout-changed|not-verified)$/);
      // Every step before it was as expected; nothing after it ran.
      const index = CHECKOUT_STEPS.indexOf(finding?.step as (typeof CHECKOUT_STEPS)[number]);
      expect(index).toBeGreaterThanOrEqual(0);
      expect(ofType(entries, 'step-completed').map((x) => x.step)).toEqual(CHECKOUT_STEPS.slice(0, index));
      expect(job.failure?.message).toContain(`step ${finding?.step}`);
      expect(finding?.screenshot).toBeDefined();
      expect(await shopWrites()).toEqual(before);
      // It turned red after a check that was fine: people are told, once.
      for (let i = 0; i < 50 && redEvents().length === 0; i++) await sleep(100);
      expect(redEvents().map((x) => x.detail)).toEqual([
        expect.objectContaining({
          jobId: 'drift-layout',
          playbook: 'checkout@1',
          step: finding?.step,
          kind: 'check',
        }),
      ]);

      // Red again, this time as a schedule submits it (belay:checks): nobody is told again.
      const { jobId: againId } = await startScheduledCheck(e.api, {
        playbook: 'checkout@1',
        tenant: TENANT,
        accounts: { shop: 'acct_demo_shop' },
        inputs: CHECKOUT_INPUTS as unknown as Record<string, unknown>,
      });
      const again = await waitForJob(e, againId, ({ job: j }) => ['SUCCEEDED', 'FAILED'].includes(j.status), {
        timeoutMs: 240_000,
        what: 'the end of the scheduled check',
      });
      expect(again.job.failure?.reason).toBe('drift-found');
      await sleep(1_000);
      expect(redEvents()).toHaveLength(1);
      const health = await recentChecks(e.ledger, TENANT, 'checkout@1');
      expect(health.map((c) => [c.jobId, c.health])).toEqual([
        [againId, 'red'],
        ['drift-layout', 'red'],
        ['drift-ok', 'ok'],
      ]);
      expect(health[2]?.steps).toHaveLength(CHECKOUT_STEPS.length);
    } finally {
      await e.shop.setFaults({ changedLayout: false });
    }
  });
});
