import { describe, expect, it } from 'vitest';
import { LatencyProfileError } from '../../../demo/sites/errors.ts';
import { latencySampler, parseLatencyProfile } from '../../../demo/sites/http/latency.ts';

describe('Function: parseLatencyProfile', () => {
  it('reads p50 and p95 in ms, in either order', () => {
    expect(parseLatencyProfile('p50=300,p95=1200', '--site-latency')).toEqual({ p50Ms: 300, p95Ms: 1200 });
    expect(parseLatencyProfile('p95=900ms, p50=250ms', '--site-latency')).toEqual({ p50Ms: 250, p95Ms: 900 });
  });

  it('refuses a bad profile, naming the option and the problem', () => {
    for (const [text, problem] of [
      ['p50=300', /both p50 and p95/],
      ['p50=300,p99=900', /"p99=900" is not/],
      ['p50=900,p95=300', /p95 must be at least p50/],
      ['p50=0,p95=300', /from 1 to 60000/],
      ['p50=300,p95=70000', /from 1 to 60000/],
    ] as const) {
      expect(() => parseLatencyProfile(text, '--site-latency')).toThrow(LatencyProfileError);
      expect(() => parseLatencyProfile(text, '--site-latency')).toThrow(problem);
      expect(() => parseLatencyProfile(text, '--site-latency')).toThrow(/^--site-latency: /);
    }
  });
});

describe('Function: latencySampler', () => {
  it('draws log-normal delays whose median and 95th percentile are the profile', () => {
    const draw = latencySampler({ p50Ms: 300, p95Ms: 1200 }, 'shop');
    const draws = Array.from({ length: 20_000 }, draw).sort((a, b) => a - b);
    const at = (q: number): number => draws[Math.floor(q * draws.length)] as number;
    expect(at(0.5)).toBeGreaterThan(300 * 0.95);
    expect(at(0.5)).toBeLessThan(300 * 1.05);
    expect(at(0.95)).toBeGreaterThan(1200 * 0.92);
    expect(at(0.95)).toBeLessThan(1200 * 1.08);
    expect(draws[0]).toBeGreaterThanOrEqual(0);
  });

  it('gives one sequence per site name: the same run after run, another for another site', () => {
    const profile = { p50Ms: 300, p95Ms: 1200 };
    const a = Array.from({ length: 5 }, latencySampler(profile, 'shop'));
    expect(Array.from({ length: 5 }, latencySampler(profile, 'shop'))).toEqual(a);
    expect(Array.from({ length: 5 }, latencySampler(profile, 'crm'))).not.toEqual(a);
  });
});
