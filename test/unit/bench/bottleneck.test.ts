import { describe, expect, it } from 'vitest';
import { type Sample, saturations } from '../../../tools/bench/scale/bottleneck.ts';

/** A quiet second of the load simulation, to vary one figure at a time. */
const quiet = (t: number, over: Partial<Sample> = {}): Sample => ({
  t,
  nodeCores: 0.2,
  dynamoCores: 0.2,
  dynamoCalls: 100,
  dynamoP95Ms: 10,
  eventLoopP99Ms: 20,
  queuedAsks: 0,
  starts: 5,
  leaseConflicts: 0,
  ...over,
});
const baseline = { dynamoP95Ms: 10 };

describe('Function: saturations', () => {
  it('finds nothing in a quiet run', () => {
    expect(
      saturations(
        [0, 1, 2, 3, 4].map((t) => quiet(t)),
        baseline,
        { cores: 2 },
      ),
    ).toEqual([]);
  });

  it('needs three seconds in a row: one slow second is noise', () => {
    const samples = [quiet(0), quiet(1, { dynamoP95Ms: 90 }), quiet(2), quiet(3, { dynamoP95Ms: 90 })];
    expect(saturations(samples, baseline, { cores: 2 })).toEqual([]);
  });

  it('orders what saturated by when it started, with the evidence of the third second', () => {
    const samples = [
      quiet(0),
      quiet(1, { dynamoP95Ms: 60 }),
      quiet(2, { dynamoP95Ms: 70, queuedAsks: 20, starts: 2 }),
      quiet(3, { dynamoP95Ms: 80, queuedAsks: 20, starts: 2 }),
      quiet(4, { queuedAsks: 30, starts: 1 }),
    ];
    const found = saturations(samples, baseline, { cores: 2 });
    expect(found.map((s) => [s.id, s.at])).toEqual([
      ['dynamodb-local', 1],
      ['queue-order', 2],
    ]);
    expect(found[0]?.evidence).toBe('p95 80 ms against 10 ms alone, 100 calls/s, 0.20 cores');
  });

  it('takes a busy thread for a bottleneck only when it is using a core, and the machine when all are busy', () => {
    const starved = [0, 1, 2].map((t) => quiet(t, { nodeCores: 0.3, eventLoopP99Ms: 600 }));
    expect(saturations(starved, baseline, { cores: 2 })).toEqual([]);
    const busy = [0, 1, 2].map((t) => quiet(t, { nodeCores: 0.95, dynamoCores: 0.95 }));
    expect(saturations(busy, baseline, { cores: 2 }).map((s) => s.id)).toEqual([
      'machine-cpu',
      'node-thread',
    ]);
  });

  it('sees the capacity STATE item when lease transactions lose more races than leases are taken', () => {
    const samples = [0, 1, 2].map((t) => quiet(t, { leaseConflicts: 9, starts: 3 }));
    expect(saturations(samples, baseline, { cores: 2 }).map((s) => s.id)).toEqual(['lease-state-item']);
  });
});
