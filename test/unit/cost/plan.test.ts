/**
 * The capacity planner (`npm run plan`), against hand-computed examples. The model: browsers
 * needed = arrivals x active minutes x burst (Little's law); queueing M/M/c (Erlang C) with
 * c = the plan's cap.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { planCaps } from '../../../lambdas/lib/capacity/plans.ts';
import { formatPlan, planCapacity } from '../../../tools/cli/plan.ts';
import { erlangC, queueing } from '../../../tools/cli/queueing.ts';

const run = promisify(execFile);

describe('Function: erlangC', () => {
  it.each([
    // c = 2, a = 1.5: a^2/2! x c/(c-a) = 1.125 x 4 = 4.5; sum_{k<2} a^k/k! = 2.5; 4.5 / 7 = 9/14
    [2, 1.5, 9 / 14],
    // M/M/1: P(wait) = utilization
    [1, 0.5, 0.5],
    // c = 3, a = 2: a^3/3! x 3/1 = 4; 1 + 2 + 2 = 5; 4 / 9
    [3, 2, 4 / 9],
    // No steady state: everyone waits
    [2, 2, 1],
  ])('ErlangC(c=%i, a=%d) = %d', (c, a, expected) => {
    expect(erlangC(c, a)).toBeCloseTo(expected, 12);
  });
});

describe('Function: planCapacity', () => {
  it('60 jobs/min x 4 min x burst 2 on growth: 480 browsers needed, cap 200 does not cover, the queue grows', () => {
    const plan = planCapacity({ arrivalsPerMinute: 60, activeMinutes: 4, plan: 'growth', burst: 2 });
    expect(plan).toMatchObject({ browsersNeeded: 480, cap: 200, covered: false });
    // Mean rate: load 240 > 200, so the queue grows by 60 - 200/4 = 10 jobs a minute.
    expect(plan.average).toMatchObject({
      offeredLoad: 240,
      stable: false,
      meanWaitMinutes: null,
      backlogGrowthPerMinute: 10,
    });
    expect(plan.average.utilization).toBeCloseTo(1.2, 12);
    // Burst peak: 120 jobs/min, 120 - 50 = 70 jobs a minute.
    expect(plan.peak).toMatchObject({ arrivalsPerMinute: 120, offeredLoad: 480, backlogGrowthPerMinute: 70 });
    const text = formatPlan(plan).join('\n');
    expect(text).toContain('browsers needed: 480');
    expect(text).toContain('does NOT cover it (short by 280)');
    expect(text).toContain('the queue grows by 10 jobs/min (after 10 min: 100 queued)');
  });

  it('the same on enterprise (cap 500): covered, and hardly anyone waits at 48% utilization', () => {
    const plan = planCapacity({ arrivalsPerMinute: 60, activeMinutes: 4, plan: 'enterprise', burst: 2 });
    expect(plan).toMatchObject({ browsersNeeded: 480, cap: 500, covered: true });
    expect(plan.average.utilization).toBeCloseTo(0.48, 12);
    expect(plan.average.probabilityOfWaiting).toBeLessThan(1e-9);
    // At the peak, 480 of 500 busy: waits become likely but stay short.
    expect(plan.peak.stable).toBe(true);
    expect(plan.peak.probabilityOfWaiting).toBeGreaterThan(0.1);
    expect(plan.peak.meanWaitMinutes).toBeLessThan(1);
  });

  it('1 job/min x 1.5 min with a cap of 2: covered on average, yet 9/14 wait, 1.93 min on average', () => {
    const plan = planCapacity({ arrivalsPerMinute: 1, activeMinutes: 1.5, plan: 'free', burst: 1, cap: 2 });
    expect(plan).toMatchObject({ browsersNeeded: 2, cap: 2, capSource: 'given', covered: true });
    expect(plan.average.probabilityOfWaiting).toBeCloseTo(9 / 14, 12);
    // Wq = C x S / (c - a) = 9/14 x 1.5 / 0.5 = 27/14
    expect(plan.average.meanWaitMinutes).toBeCloseTo(27 / 14, 12);
  });

  it('M/M/1 (cap 1), 0.25 jobs/min of 2 min: Wq = rho / (mu - lambda) = 0.5 / 0.25 = 2 min', () => {
    expect(queueing(0.25, 2, 1).meanWaitMinutes).toBeCloseTo(2, 12);
  });

  it('rounds the browsers needed up, without floating-point surprises', () => {
    expect(
      planCapacity({ arrivalsPerMinute: 60, activeMinutes: 4, plan: 'growth', burst: 1.1 }).browsersNeeded,
    ).toBe(264);
    expect(
      planCapacity({ arrivalsPerMinute: 7, activeMinutes: 0.5, plan: 'free', burst: 1 }).browsersNeeded,
    ).toBe(4);
  });

  it('takes configured caps, and refuses unknown plans and bad numbers', () => {
    expect(
      planCapacity({
        arrivalsPerMinute: 1,
        activeMinutes: 1,
        plan: 'free',
        burst: 1,
        caps: planCaps({ free: 2 }),
      }).cap,
    ).toBe(2);
    expect(() => planCaps({ gold: 3 })).toThrow();
    expect(() => planCaps({ free: 0 })).toThrow();
    expect(() => planCapacity({ arrivalsPerMinute: 0, activeMinutes: 1, plan: 'free', burst: 1 })).toThrow(
      RangeError,
    );
    expect(() => planCapacity({ arrivalsPerMinute: 1, activeMinutes: 1, plan: 'free', burst: 0.5 })).toThrow(
      RangeError,
    );
  });
});

describe('CLI: npm run plan', () => {
  it('prints the plan, its verdict, the queueing and the model it assumes', { timeout: 60_000 }, async () => {
    const { stdout } = await run(
      'npm',
      [
        'run',
        '-s',
        'plan',
        '--',
        '--arrivals-per-min',
        '60',
        '--active-minutes',
        '4',
        '--plan',
        'growth',
        '--burst',
        '2',
      ],
      {
        env: { ...process.env, BELAY_PLAN_CAPS: '' },
      },
    );
    expect(stdout).toContain('browsers needed: 480 (burst x2, 4 min active per job)');
    expect(stdout).toContain('plan growth: 200 concurrent browsers: does NOT cover it (short by 280)');
    expect(stdout).toContain(
      'queueing at the mean rate: 60 jobs/min, load 240 > cap: unstable, the queue grows by 10 jobs/min',
    );
    expect(stdout).toContain('assumption: queueing model: M/M/c (Erlang C)');
    const json = await run(
      'npx',
      [
        'tsx',
        'tools/cli/plan.ts',
        '--arrivals-per-min',
        '1',
        '--active-minutes',
        '1.5',
        '--cap',
        '2',
        '--json',
      ],
      {
        env: { ...process.env, BELAY_PLAN_CAPS: '{"free": 3}' },
      },
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      cap: 2,
      capSource: 'given',
      covered: true,
      browsersNeeded: 2,
    });
    await expect(
      run('npx', [
        'tsx',
        'tools/cli/plan.ts',
        '--arrivals-per-min',
        '1',
        '--active-minutes',
        '1',
        '--plan',
        'gold',
      ]),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining('unknown plan gold'),
    });
  });
});
