/**
 * How far one account scales, on paper (`npm run plan -- --jobs-per-day N`): the model against
 * hand-computed figures. r = jobs a day / 86,400 x peak factor (3): 100,000 a day is 3.4722/s.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  browserSecondsPerJob,
  DEFAULT_SCALE_INPUT,
  demandOf,
  formatScaleTable,
  type ScaleInput,
  scalePlan,
} from '../../../tools/cli/scale.ts';
import { QUOTAS } from '../../../tools/cli/scale-quotas.ts';

const run = promisify(execFile);
const input: ScaleInput = { ...DEFAULT_SCALE_INPUT, jobsPerDay: [1000, 10_000, 100_000] };
const r = (100_000 / 86_400) * 3;

describe('Function: demandOf', () => {
  it.each([
    ['sfnStartExecution', r],
    ['sfnStateTransitions', r * 34],
    // Little's law: 4 min of steps + a 5 min approval with the browser held.
    ['anchorConcurrency', r * 540],
    ['tenantCap', r * 0.5 * 540],
    // Lambda: the steps' 240 s + (17 engine + 2 x 3 API/authorizer invocations) x 0.3 s.
    ['lambdaConcurrency', r * (240 + 23 * 0.3)],
    // Transactions: 2 x (26 job-item writes x 2 units (1.5 KB) + 23 entries x 1) + both GSIs 2 x 26 x 2 + leases 2 x 5.
    ['ddbTable', r * 264],
    ['ddbTenantGsi', r * 0.5 * 52],
    ['ddbCapState', r * 0.5 * 2],
    ['apiStage', r * 3],
    ['apiKey', r * 0.5 * 3],
    ['eventBridge', r],
    ['anchorLaunches', r * 60],
  ] as const)('%s at 100,000 jobs a day: %d', (id, expected) => {
    expect(demandOf(id, 100_000, input)).toBeCloseTo(expected, 6);
  });

  it('gives the browser back during an approval longer than the park-after time', () => {
    expect(browserSecondsPerJob(input)).toBe(540);
    expect(browserSecondsPerJob({ ...input, approvalMinutes: 20 })).toBe(240);
    expect(demandOf('anchorConcurrency', 100_000, { ...input, approvalMinutes: 20 })).toBeCloseTo(r * 240, 6);
  });

  it('reads the queue partition a little while the tenant is under its cap, without bound past it', () => {
    // 10,000 a day: the tenant offers 0.1736 jobs/s x 540 s = 94 browsers to a cap of 500: no queue to speak of.
    expect(demandOf('ddbQueueReads', 10_000, input)).toBeLessThan(1);
    // 100,000 a day: 938 browsers offered to 500: the queue grows, and every ask reads it all.
    expect(demandOf('ddbQueueReads', 100_000, input)).toBe(Number.POSITIVE_INFINITY);
    // Close under the cap the queue is real: 52,000 a day offers 487.5 of 500.
    const near = demandOf('ddbQueueReads', 52_000, input);
    expect(near).toBeGreaterThan(1);
    expect(Number.isFinite(near)).toBe(true);
  });

  it('counts the history per job, whatever the volume', () => {
    expect(demandOf('sfnHistory', 1000, input)).toBe(demandOf('sfnHistory', 100_000, input));
  });
});

describe('Function: scalePlan', () => {
  const result = scalePlan(input);
  const row = (id: string) => result.rows.find((x) => x.quota.id === id);

  it('finds where each quota binds: linear ones at limit / load per job/day', () => {
    expect(row('sfnStartExecution')?.breaksAt).toBeCloseTo((300 / r) * 100_000, 0);
    expect(row('anchorConcurrency')?.breaksAt).toBeCloseTo((500 / (r * 540)) * 100_000, 0);
    expect(row('sfnHistory')?.breaksAt).toBeNull();
  });

  it('says the Anchor plan binds first (at ~26,667 jobs a day), and what is over at 100,000', () => {
    expect(result.firstToBreak).toMatchObject({ id: 'anchorConcurrency', jobsPerDay: 26_667 });
    expect(result.broken[0]).toEqual([]);
    expect(result.broken[1]).toEqual([]);
    expect(result.broken[2]).toEqual(['ddbQueueReads', 'anchorConcurrency', 'tenantCap']);
  });

  it('follows the plan: on growth (200 browsers) the Anchor plan binds at 10,667 a day', () => {
    const growth = scalePlan({ ...input, anchorCap: 200, tenantCap: 200 });
    expect(growth.firstToBreak).toMatchObject({ id: 'anchorConcurrency', jobsPerDay: 10_667 });
  });

  it('refuses volumes, peaks and shares that mean nothing', () => {
    expect(() => scalePlan({ ...input, jobsPerDay: [0] })).toThrow(RangeError);
    expect(() => scalePlan({ ...input, peakFactor: 0.5 })).toThrow(RangeError);
    expect(() => scalePlan({ ...input, tenantShare: 1.5 })).toThrow(RangeError);
  });

  it('names a default, its source and what raises it for every quota', () => {
    for (const q of QUOTAS) {
      expect(q.limit, q.id).toBeGreaterThan(0);
      expect(q.source.length, q.id).toBeGreaterThan(10);
      expect(q.raise.length, q.id).toBeGreaterThan(10);
    }
    const lines = formatScaleTable(result);
    expect(lines[0]).toBe(
      '| quota | default (source) | 1,000/day | 10,000/day | 100,000/day | binds at (jobs/day) | what raises it |',
    );
    expect(lines.filter((l) => l.startsWith('| ')).length).toBe(QUOTAS.length + 1);
  });
});

describe('CLI: npm run plan -- --jobs-per-day', () => {
  it('prints the scale table at 1,000 / 10,000 / 100,000 jobs a day and what binds first', async () => {
    const { stdout } = await run('npm', ['run', '-s', 'plan', '--', '--jobs-per-day', '100000'], {
      env: { ...process.env, BELAY_PLAN_CAPS: '' },
    });
    expect(stdout).toContain('| 1,000/day | 10,000/day | 100,000/day |');
    expect(stdout).toContain('Binds first: Anchor concurrent browsers');
    expect(stdout).toContain('| Step Functions StartExecution (Standard) | 300 /s');
  });

  it('adds the volume asked for as a column, and prints JSON on request', async () => {
    const { stdout } = await run('npx', ['tsx', 'tools/cli/plan.ts', '--jobs-per-day', '250000', '--json']);
    const json = JSON.parse(stdout) as { input: { jobsPerDay: number[] }; firstToBreak: { id: string } };
    expect(json.input.jobsPerDay).toEqual([1000, 10_000, 100_000, 250_000]);
    expect(json.firstToBreak.id).toBe('anchorConcurrency');
  });
});
