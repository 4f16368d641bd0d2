/**
 * The reduced chaos run of `npm test`: four jobs (checkouts on the shop's TOTP and SMS
 * accounts, two CRM-billing syncs) with every fault kind injected at least once, the stack as
 * a child process killed and restarted once, checked against the demo sites' own records.
 * Plus the plan and the re-execution check on their own, without a stack.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { catalogOf, type PlaybookCatalog } from '../../../tools/chaos/catalog.ts';
import type { EntryView } from '../../../tools/chaos/clients.ts';
import type { SeenEvent } from '../../../tools/chaos/events.ts';
import { FAULT_KINDS, faultsPerKind, planRun } from '../../../tools/chaos/plan.ts';
import { createPrng } from '../../../tools/chaos/prng.ts';
import { formatSummary } from '../../../tools/chaos/report.ts';
import { runChaos } from '../../../tools/chaos/run.ts';
import { reExecutions } from '../../../tools/chaos/verify.ts';
import { repoPlaybooks } from '../../support/playbooks.ts';

const SEED = 1;
const RUNS = 4;

let catalog: PlaybookCatalog;
beforeAll(async () => {
  catalog = catalogOf((await repoPlaybooks()).registry);
});

describe('the chaos plan', () => {
  it('is the same for the same seed, and puts every fault kind in a run of four', () => {
    const a = planRun(createPrng(SEED), RUNS, SEED, catalog);
    const b = planRun(createPrng(SEED), RUNS, SEED, catalog);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(planRun(createPrng(2), RUNS, 2, catalog))).not.toBe(JSON.stringify(a));
    const kinds = new Set(a.flatMap((j) => j.faults.map((f) => f.kind)));
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
    expect(new Set(a.map((j) => j.playbook))).toEqual(new Set(['checkout@1', 'crm-billing-sync@1']));
    const shop = a.filter((j) => j.playbook === 'checkout@1').map((j) => j.body.accounts.shop);
    expect(shop).toEqual(expect.arrayContaining(['acct_demo_shop_totp', 'acct_demo_shop_sms']));
  });

  it('plans every kind six times over thirty jobs (five must land), a dropped response never with a kill after that write', () => {
    const plan = planRun(createPrng(7), 30, 7, catalog);
    expect(faultsPerKind(30)).toBe(6);
    for (const kind of FAULT_KINDS) {
      expect(plan.flatMap((j) => j.faults).filter((f) => f.kind === kind)).toHaveLength(6);
    }
    let checked = 0;
    for (const job of planRun(createPrng(30), 30, 30, catalog)) {
      const drop = job.faults.find((f) => f.kind === 'drop-write-response');
      const after = job.faults.filter(
        (f) => f.kind === 'worker-kill:after-action' || f.kind === 'worker-kill:during-checkpoint',
      );
      if (drop && job.playbook === 'crm-billing-sync@1') {
        expect(after.map((f) => f.step)).not.toContain(drop.step);
        checked++;
      }
    }
    // The plan has such jobs to check.
    expect(checked).toBeGreaterThan(0);
  });
});

describe('the re-execution check', () => {
  const event = (step: string, at: string, point = 'before-action'): SeenEvent =>
    ({
      seq: 1,
      type: 'fault-point',
      at: Date.parse(at),
      bootId: 'b',
      functionName: 'belay-run-step',
      pid: 42,
      point,
      info: { jobId: 'j', step },
    }) as SeenEvent;
  const completed: EntryView[] = [{ type: 'step-completed', step: 'search', at: '2026-01-01T10:00:05.000Z' }];

  it('counts an action that began after the step was recorded complete', () => {
    const found = reExecutions(completed, [
      event('search', '2026-01-01T10:00:01Z'),
      event('search', '2026-01-01T10:00:09Z'),
    ]);
    expect(found).toEqual([
      expect.objectContaining({ step: 'search', completedAt: '2026-01-01T10:00:05.000Z' }),
    ]);
  });

  it('does not count attempts before the completion, other steps, or other points', () => {
    const events = [
      event('search', '2026-01-01T10:00:01Z'),
      event('add-item-a', '2026-01-01T10:00:09Z'),
      event('search', '2026-01-01T10:00:09Z', 'during-checkpoint'),
    ];
    expect(reExecutions(completed, events)).toEqual([]);
  });
});

describe(`a reduced chaos run (${RUNS} jobs, seed ${SEED})`, () => {
  it('ends every job succeeded with one side effect per write, nothing run again, nothing stuck or left running', async () => {
    const lines: string[] = [];
    const summary = await runChaos({
      runs: RUNS,
      seed: SEED,
      concurrency: 2,
      jobTimeoutMs: 300_000,
      stallTimeoutMs: 150_000,
      runTimeoutMs: 300_000,
      removeDataDir: 'always',
      say: (line) => lines.push(line),
    });
    const report = `${lines.join('\n')}\n${formatSummary(summary)}`;
    expect(summary.jobs, report).toBe(RUNS);
    for (const kind of FAULT_KINDS)
      expect(summary.faultsInjected.byKind[kind], `${kind}\n${report}`).toBeGreaterThanOrEqual(1);
    expect(summary.jobsStuck, report).toBe(0);
    expect(summary.jobsSucceeded, report).toBe(RUNS);
    for (const job of summary.sideEffectsPerJob) {
      for (const count of Object.values(job.writes)) expect(count, `${job.jobId}\n${report}`).toBe(1);
    }
    expect(summary.completedStepsExecutedAgain, report).toBe(0);
    expect(summary.layoutChecks.length, report).toBeGreaterThanOrEqual(1);
    expect(
      summary.layoutChecks.every((c) => c.ok && c.reviewStep !== undefined),
      report,
    ).toBe(true);
    expect(summary.recordProblems, report).toEqual([]);
    expect(summary.people.mfaCodes, report).toBeGreaterThanOrEqual(1);
    expect(summary.stackRestarts.length, report).toBeGreaterThanOrEqual(1);
    expect(summary.leftoverProcesses, report).toEqual([]);
    expect(summary.ok, report).toBe(true);
  }, 720_000);
});
