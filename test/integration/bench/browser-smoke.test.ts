/**
 * Smoke run of the benchmark's cheapest section (browser, 2 runs): it measures something
 * plausible and leaves no Chromium behind. Figures are not judged here.
 */
import { describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../../local/chromium.ts';
import { runBrowser } from '../../../tools/bench/browser.ts';

describe('npm run bench -- --sections browser (smoke)', () => {
  it('measures create, fresh and warm reattach, and stops every Chromium', async () => {
    const pids = new Set<number>();
    const { result, samples } = await runBrowser({ runs: 2, log: () => undefined, pids });
    expect(samples.createMs).toHaveLength(2);
    expect(samples.reattachFreshMs).toHaveLength(2);
    expect(samples.libraryLoadMs).toHaveLength(2);
    expect(samples.reattachWarmMs).toHaveLength(2);
    // Each a measured time: positive, and under the section's own bound for a local session.
    for (const ms of [...samples.createMs, ...samples.reattachFreshMs, ...samples.libraryLoadMs]) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThan(30_000);
    }
    for (const ms of samples.reattachWarmMs) expect(ms).toBeGreaterThan(0);
    expect(samples.screenshotCaptureMs).toHaveLength(2);
    for (const bytes of samples.screenshotBytes) expect(bytes).toBeLessThanOrEqual(200 * 1024);
    expect(result.figures.map((f) => f.runs)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2]);
    expect(result.loadAverage.start).toHaveLength(3);
    expect(pids.size).toBe(3); // two created-and-ended sessions, one reattached to
    expect([...pids].filter(isProcessAlive)).toEqual([]);
  }, 120_000);
});
