import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessAlive, waitForExit } from '../../../local/chromium.ts';
import { runScale } from '../../../tools/bench/scale/run.ts';

/** The load simulation, small: real ASL, real handler cores, DynamoDB Local, the browser scripted. */

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('Bench section: scale', () => {
  it('runs every job to completion and measures writes, partitions, conflicts and the runner', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'belay-scale-test-'));
    dirs.push(dataDir);
    const pids = new Set<number>();
    const { result, samples } = await runScale({
      jobs: 6,
      tenants: 2,
      stepMs: 5,
      approveMs: 50,
      timeoutMs: 240_000,
      sockets: 100,
      dataDir,
      log: () => undefined,
      pids,
    });
    expect(result.violations).toEqual([]);
    expect(samples.jobs).toHaveLength(6);
    expect(samples.jobs.every((j) => j.status === 'SUCCEEDED')).toBe(true);
    const figure = (label: string) => result.figures.find((f) => f.label === label);
    expect(figure('jobs succeeded')?.value).toBe(6);
    expect(figure('throughput')?.value).toBeGreaterThan(0);
    // Every job-item write is counted on the tenant's gsi2 partition too.
    const gsi2 = samples.hotPartitions.filter((p) => p.partition.startsWith('gsi2:T#'));
    expect(gsi2.length).toBeGreaterThan(0);
    expect(samples.writesByKind['T#<tenant>#J#<job>']).toBeGreaterThan(6 * 14);
    // The metrics file tells the ledger's story: 6 + the warm-up job, 14 steps each.
    expect(samples.metricsFile.jobsSucceeded).toBe(7);
    expect(samples.metricsFile.stepsCompleted).toBe(7 * 14);
    expect(samples.jobItemBytes.median).toBeGreaterThan(500);
    expect(Math.min(...samples.jobs.map((j) => j.historyEvents))).toBeGreaterThan(34);
    expect(result.notes[0]).toMatch(/^first bottleneck: /);
    // DynamoDB Local, the one process the run started, is gone.
    expect(pids.size).toBe(1);
    for (const pid of pids) {
      await waitForExit(pid, 10_000);
      expect(isProcessAlive(pid)).toBe(false);
    }
  }, 300_000);
});
