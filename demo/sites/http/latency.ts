/**
 * A demo site's latency profile: every page and form answer waits a time drawn from a
 * log-normal distribution with the given median and 95th percentile, so that recovery can be
 * measured against pages as slow as real applications' (the demo sites answer in a few ms).
 * Draws come from a PRNG seeded by the site's name: one profile gives the same sequence of
 * delays run after run.
 */
import { LatencyProfileError } from '../errors.ts';

/** Response times to imitate, in ms: the median and the 95th percentile. */
export interface LatencyProfile {
  p50Ms: number;
  p95Ms: number;
}

const MAX_MS = 60_000;
/** The standard normal's 95th percentile. */
const Z95 = 1.6448536269514722;

/** The problem with a profile, or undefined when it is sound. */
export function latencyProblem(profile: { p50Ms?: unknown; p95Ms?: unknown }): string | undefined {
  const { p50Ms, p95Ms } = profile;
  for (const [name, v] of [
    ['p50', p50Ms],
    ['p95', p95Ms],
  ] as const) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_MS)
      return `${name} must be an integer number of ms from 1 to ${MAX_MS}`;
  }
  if ((p95Ms as number) < (p50Ms as number)) return 'p95 must be at least p50';
  return undefined;
}

/**
 * Parses `p50=300,p95=1200` (ms).
 *
 * @param source where the text came from, for the message (`--site-latency`)
 * @throws LatencyProfileError naming the source and the problem
 */
export function parseLatencyProfile(text: string, source: string): LatencyProfile {
  const fields: Record<string, number> = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(p50|p95)=(\d{1,6})(?:ms)?$/.exec(part);
    if (!m) throw new LatencyProfileError(source, `"${part.slice(0, 40)}" is not p50=<ms> or p95=<ms>`);
    fields[m[1] as string] = Number(m[2]);
  }
  if (fields.p50 === undefined || fields.p95 === undefined)
    throw new LatencyProfileError(source, 'both p50 and p95 are needed');
  const profile = { p50Ms: fields.p50, p95Ms: fields.p95 };
  const problem = latencyProblem(profile);
  if (problem) throw new LatencyProfileError(source, problem);
  return profile;
}

/** `p50=300 ms, p95=1200 ms`, for reports. */
export function describeLatency(p: LatencyProfile): string {
  return `p50=${p.p50Ms} ms, p95=${p.p95Ms} ms`;
}

/** mulberry32: a small seeded PRNG in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seedOf(name: string): number {
  let h = 2166136261;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

/**
 * Delays drawn from the profile: log-normal with median p50 and 95th percentile p95 (so
 * mu = ln p50, sigma = ln(p95 / p50) / z95), capped at 60 s.
 */
export function latencySampler(profile: LatencyProfile, seedName: string): () => number {
  const random = prng(seedOf(seedName));
  const mu = Math.log(profile.p50Ms);
  const sigma = Math.log(profile.p95Ms / profile.p50Ms) / Z95;
  return () => {
    // Box-Muller: one standard normal draw from two uniforms.
    const u = 1 - random();
    const v = random();
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    return Math.min(MAX_MS, Math.round(Math.exp(mu + sigma * z)));
  };
}
