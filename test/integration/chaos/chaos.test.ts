/**
 * The reduced chaos run of `npm test`: four jobs (checkouts on the shop's TOTP and SMS
 * accounts, two CRM-billing syncs) with every fault kind injected at least once, the stack as
 * a child process killed and restarted once, checked against the demo sites' own records.
 * Plus the re-execution check on its own, without a stack (the plan's tests are unit tests:
 * `test/unit/tools/chaos-plan.test.ts`).
 */
import { describe, expect, it } from 'vitest';
import type { EntryView } from '../../../tools/chaos/clients.ts';
import type { SeenEvent } from '../../../tools/chaos/events.ts';
import { FAULT_KINDS } from '../../../tools/chaos/faults.ts';
import { formatSummary } from '../../../tools/chaos/report.ts';
import { runChaos } from '../../../tools/chaos/run.ts';
import { reExecutions } from '../../../tools/chaos/verify.ts';

const SEED = 1;
const RUNS = 4;

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
