/**
 * The agent section's arithmetic on hand-made samples: the cache share, the crash's time and
 * model calls lost for Belay and the naive agent, their ratios and the targets' verdicts.
 */
import { describe, expect, it } from 'vitest';
import { crmRecordsAgentInputSchema } from '../../../playbooks/crm-records-agent/index.ts';
import {
  type AgentRunSample,
  type AgentSamples,
  agentFigures,
  agentInputs,
  cacheShare,
  type NaiveAgentSample,
  priceUsage,
  timesLess,
} from '../../../tools/bench/agent.ts';

const belay = (o: Partial<AgentRunSample>): AgentRunSample => ({
  wallMs: 0,
  modelCalls: 0,
  usage: 0,
  modelUsd: 0,
  cachedActions: 0,
  heals: 0,
  failedReplayActions: 0,
  step12Ms: Number.NaN,
  usd: 0,
  ...o,
});
const naive = (o: Partial<NaiveAgentSample>): NaiveAgentSample => ({
  wallMs: 0,
  modelCalls: 0,
  usage: 0,
  stepsExecuted: 14,
  killToVerifiedMs: Number.NaN,
  usd: 0,
  ...o,
});

function samples(o: Partial<AgentSamples> = {}): AgentSamples {
  return {
    latencyMs: 1500,
    first: [belay({ wallMs: 70_000, modelCalls: 42, step12Ms: 4_800, usd: 0.01 })],
    second: [belay({ wallMs: 20_000, modelCalls: 0, cachedActions: 42 })],
    layout: [belay({ wallMs: 40_000, modelCalls: 13, cachedActions: 29, heals: 13 })],
    crashed: [belay({ wallMs: 74_000, modelCalls: 42, usd: 0.012 })],
    belayRestartMs: [1_400],
    belayRerunMs: [3_600],
    naiveClean: [naive({ wallMs: 65_000, modelCalls: 42 })],
    naiveCrashed: [
      naive({ wallMs: 125_000, modelCalls: 78, stepsExecuted: 25, killToVerifiedMs: 58_000, usd: 0.003 }),
    ],
    ...o,
  };
}

const figure = (figures: ReturnType<typeof agentFigures>, label: string) => {
  const f = figures.find((x) => x.label === label);
  if (!f) throw new Error(`no figure "${label}"`);
  return f;
};

describe('agent section figures', () => {
  it('counts the share of actions served by the cache', () => {
    expect(cacheShare({ cachedActions: 38, modelCalls: 2 })).toBe(0.95);
    expect(cacheShare({ cachedActions: 0, modelCalls: 0 })).toBeNaN();
  });

  it('judges the second run against 90% of actions from the cache', () => {
    const pass = agentFigures(samples());
    expect(figure(pass, 'Belay second run: actions from the cache').value).toBe(100);
    expect(figure(pass, 'Belay second run: actions from the cache').verdict?.pass).toBe(true);
    const miss = agentFigures(samples({ second: [belay({ cachedActions: 34, modelCalls: 6 })] }));
    expect(figure(miss, 'Belay second run: actions from the cache').value).toBe(85);
    expect(figure(miss, 'Belay second run: actions from the cache').verdict?.pass).toBe(false);
  });

  it('takes time and model calls lost as crashed minus clean, and the ratios naive over Belay', () => {
    const f = agentFigures(samples());
    // Naive: 125,000 - 65,000; 78 - 42 calls.
    expect(figure(f, 'naive agent: time lost to the crash').value).toBe(60_000);
    expect(figure(f, 'naive agent: model calls lost to the crash').value).toBe(36);
    // Belay: wall times 74,000 - 70,000; direct 1,400 + 3,600; calls 42 - 42.
    expect(figure(f, 'Belay: time lost to the crash (wall times)').value).toBe(4_000);
    expect(figure(f, 'Belay: kill -> step 12 verified again (direct)').value).toBe(5_000);
    expect(figure(f, 'Belay: model calls lost to the crash').value).toBe(0);
    expect(figure(f, 'ratio: naive time lost / Belay kill -> verified again').value).toBe(12);
    // Informational: the naive side by wall times; the target is read on the like-for-like ratio.
    expect(figure(f, 'ratio: naive time lost / Belay kill -> verified again').verdict).toBeUndefined();
    // Both read on the crashed runs: 58,000 / 5,000.
    expect(figure(f, 'naive agent: kill -> step 12 verified again (direct)').value).toBe(58_000);
    const direct = figure(f, 'ratio: naive / Belay, kill -> step 12 verified again (both direct)');
    expect(direct.value).toBe(11.6);
    expect(direct.verdict?.pass).toBe(true);
    // No model call lost: no ratio, but at least 10x less holds.
    const calls = figure(f, 'ratio: naive model calls lost / Belay model calls lost');
    expect(calls.value).toBeNull();
    expect(calls.verdict?.pass).toBe(true);
    // Step 12 took 4,800 ms: the target is 5,800 ms.
    expect(figure(f, 'Belay: kill -> step 12 verified again (direct)').verdict).toEqual({
      target: '<= step 12 + 1 s = 5800 ms',
      pass: true,
    });
    expect(figure(f, 'cost per verified completion, Belay (killed in step 12)').value).toBe(0.012);
    expect(figure(f, 'cost per verified completion, naive agent (killed in step 12)').value).toBe(0.003);
  });

  it('misses the targets when Belay loses too much', () => {
    const f = agentFigures(
      samples({
        crashed: [belay({ wallMs: 90_000, modelCalls: 46 })],
        belayRestartMs: [4_000],
        belayRerunMs: [4_000],
      }),
    );
    expect(figure(f, 'Belay: kill -> step 12 verified again (direct)').verdict?.pass).toBe(false);
    expect(figure(f, 'Belay: time lost to the crash (wall times)').verdict).toBeUndefined();
    // 60,000 / 8,000 = 7.5x; 36 / 4 = 9x: both under 10x.
    expect(figure(f, 'ratio: naive time lost / Belay kill -> verified again').value).toBe(7.5);
    expect(figure(f, 'ratio: naive time lost / Belay kill -> verified again').verdict).toBeUndefined();
    // 58,000 / 8,000 = 7.25x.
    expect(
      figure(f, 'ratio: naive / Belay, kill -> step 12 verified again (both direct)').verdict?.pass,
    ).toBe(false);
    expect(figure(f, 'ratio: naive model calls lost / Belay model calls lost').value).toBe(9);
    expect(figure(f, 'ratio: naive model calls lost / Belay model calls lost').verdict?.pass).toBe(false);
  });

  it('prints n/a, never a pass, for what was not measured', () => {
    const f = agentFigures(samples({ crashed: [], belayRestartMs: [], belayRerunMs: [], naiveCrashed: [] }));
    expect(figure(f, 'Belay: kill -> step 12 verified again (direct)').value).toBeNull();
    expect(figure(f, 'Belay: kill -> step 12 verified again (direct)').verdict?.pass).toBe(false);
    expect(figure(f, 'ratio: naive time lost / Belay kill -> verified again').verdict).toBeUndefined();
  });
});

describe('timesLess', () => {
  it('passes at 10x or more, and when Belay lost nothing but the naive runner did', () => {
    expect(timesLess(100, 10, 10, 't').pass).toBe(true);
    expect(timesLess(99, 10, 10, 't').pass).toBe(false);
    expect(timesLess(5, 0, 10, 't').pass).toBe(true);
    expect(timesLess(0, 0, 10, 't').pass).toBe(false);
    expect(timesLess(Number.NaN, 0, 10, 't').pass).toBe(false);
    expect(timesLess(100, -1, 10, 't').pass).toBe(false);
  });
});

describe('priceUsage', () => {
  it('prices browser time and adds model dollars', () => {
    const browser = priceUsage({ browserSeconds: 3600 });
    expect(browser).toBeGreaterThan(0);
    expect(priceUsage({ browserSeconds: 3600, modelUsd: 0.5 })).toBeCloseTo(browser + 0.5, 9);
    expect(priceUsage({})).toBe(0);
  });
});

describe('agentInputs', () => {
  it('are valid crm-records-agent@1 inputs, every value different from one variant to the next', () => {
    const a = agentInputs(1);
    const b = agentInputs(2);
    expect(crmRecordsAgentInputSchema.safeParse(a).success).toBe(true);
    for (const key of ['c1', 'c2', 'c3', 'c4', 'c5'] as const) {
      expect(a[key].customerId).toBe(b[key].customerId);
      expect(a[key].contactName).not.toBe(b[key].contactName);
      expect(a[key].phone).not.toBe(b[key].phone);
      expect(a[key].email).not.toBe(b[key].email);
    }
  });
});
