import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LambdaFunctionError, LambdaUnknownError } from '../../../local/lambda/errors.ts';
import type { FaultPointEvent } from '../../../local/lambda/events.ts';
import { createLambdaRunner, functionNameOf, type LambdaRunner } from '../../../local/lambda/runner.ts';
import type { InvokeOptions } from '../../../local/sfn/types.ts';

const ENTRY = 'test/fixtures/local-lambda/behaviors.ts';
const ARN = 'arn:aws:lambda:us-east-1:000000000000:function:behaviors';

interface Answer {
  invocations: number;
  pid: number;
  requestId: string;
  functionName: string;
  remainingMs: number;
  env: string | null;
}

/** The error an invocation rejected with (fails the test if it resolved). */
async function rejection<E extends Error>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (err) {
    return err as E;
  }
  throw new Error('expected the invocation to reject');
}

const opts = (): InvokeOptions => ({ timeoutMs: 10_000, signal: new AbortController().signal });

function alive(pid: number | undefined): boolean {
  if (pid === undefined || pid <= 0) throw new Error(`no pid to check: ${pid}`);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every pid a runner spawned, to prove none is left behind. */
function trackPids(runner: LambdaRunner): Set<number> {
  const pids = new Set<number>();
  runner.events.on('worker-spawned', (e) => pids.add(e.pid));
  return pids;
}

let warm: LambdaRunner;
let cold: LambdaRunner;
let warmPids: Set<number>;
let coldPids: Set<number>;

beforeAll(() => {
  warm = createLambdaRunner({
    mode: 'warm',
    output: 'ignore',
    env: { FIXTURE_ENV: 'from-runner' },
    functions: {
      [ARN]: { entry: ENTRY, timeoutMs: 1500 },
      limited: { entry: ENTRY, timeoutMs: 5000, maxConcurrency: 1 },
    },
  });
  cold = createLambdaRunner({
    mode: 'cold',
    output: 'ignore',
    functions: { behaviors: { entry: ENTRY, timeoutMs: 5000, env: { FIXTURE_ENV: 'from-function' } } },
  });
  warmPids = trackPids(warm);
  coldPids = trackPids(cold);
});

afterAll(async () => {
  await warm?.stop();
  await cold?.stop();
});

describe('Function: createLambdaRunner', () => {
  it('keeps module scope across invocations in warm mode, with a Lambda-like context', async () => {
    const t0 = performance.now();
    const a = (await warm.invoke(ARN, {}, opts())) as Answer;
    const coldStartMs = performance.now() - t0;
    const t1 = performance.now();
    const b = (await warm.invoke('behaviors', {}, opts())) as Answer;
    const warmMs = performance.now() - t1;
    console.log(`cold start + invoke: ${coldStartMs.toFixed(0)} ms; warm invoke: ${warmMs.toFixed(1)} ms`);
    expect(b.pid).toBe(a.pid);
    expect(b.invocations).toBe(a.invocations + 1);
    expect(a.functionName).toBe('behaviors');
    expect(a.requestId).not.toBe(b.requestId);
    expect(a.remainingMs).toBeGreaterThan(1000);
    expect(a.remainingMs).toBeLessThanOrEqual(1500);
    expect(a.env).toBe('from-runner');
  });

  it('starts a fresh process per invocation in cold mode', async () => {
    const a = (await cold.invoke('behaviors', {}, opts())) as Answer;
    const b = (await cold.invoke('behaviors', {}, opts())) as Answer;
    expect([a.invocations, b.invocations]).toEqual([1, 1]);
    expect(b.pid).not.toBe(a.pid);
    expect(a.env).toBe('from-function');
    // Cold workers exit once their one invocation is answered.
    await expect.poll(() => alive(a.pid), { timeout: 3000 }).toBe(false);
  });

  it('names the handler on the worker command line, running its bundle', async () => {
    const a = (await warm.invoke(ARN, {}, opts())) as Answer;
    const argv = readFileSync(`/proc/${a.pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toEqual(expect.arrayContaining(['--function', 'behaviors']));
    // Node's options are the function's NODE_OPTIONS, as in Lambda: none on the command line.
    expect(argv).not.toContain('--enable-source-maps');
    expect(argv).not.toContain('tsx');
    expect(argv.some((arg) => /\.local\/bundles\/local-lambda-worker-\w+\.mjs$/.test(arg))).toBe(true);
    expect(argv[argv.indexOf('--entry') + 1]).toMatch(
      /\.local\/bundles\/test-fixtures-local-lambda-behaviors-\w+\.mjs$/,
    );
  });

  it('runs the TypeScript sources through tsx with bundle: false', async () => {
    const sources = createLambdaRunner({
      mode: 'warm',
      bundle: false,
      output: 'ignore',
      functions: { behaviors: { entry: ENTRY, timeoutMs: 5000 } },
    });
    try {
      const a = (await sources.invoke('behaviors', {}, opts())) as Answer;
      const argv = readFileSync(`/proc/${a.pid}/cmdline`, 'utf8').split('\0');
      expect(argv).toEqual(
        expect.arrayContaining(['--import', 'tsx', 'local/lambda/worker.ts', '--function', 'behaviors']),
      );
      expect(argv[argv.indexOf('--entry') + 1]).toMatch(/test\/fixtures\/local-lambda\/behaviors\.ts$/);
    } finally {
      await sources.stop();
    }
    expect(sources.workers()).toEqual([]);
  });

  it('rejects a handler error with its own error name', async () => {
    const err = await rejection<LambdaFunctionError>(
      warm.invoke(ARN, { mode: 'throw', errorName: 'LedgerUnavailableError' }, opts()),
    );
    expect(err).toBeInstanceOf(LambdaFunctionError);
    expect(err.name).toBe('LedgerUnavailableError');
    expect(err.trace.length).toBeGreaterThan(0);
  });

  it.each([
    ['exit', /exit status 3/],
    ['uncaught', /exit status 1/],
  ])('rejects Lambda.Unknown when the process dies (%s)', async (mode, detail) => {
    const err = await rejection<LambdaUnknownError>(warm.invoke(ARN, { mode }, opts()));
    expect(err).toBeInstanceOf(LambdaUnknownError);
    expect(err.name).toBe('Lambda.Unknown');
    expect(err.message).toMatch(detail);
    expect(alive(err.pid)).toBe(false);
  });

  it('kills an invocation that outlives its timeout and rejects Lambda.Unknown', async () => {
    const started = Date.now();
    const err = await rejection<LambdaUnknownError>(
      warm.invoke(ARN, { mode: 'sleep', sleepMs: 10_000 }, opts()),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(err).toMatchObject({ name: 'Lambda.Unknown', reason: 'timeout', errorType: 'Sandbox.Timedout' });
    expect(err.message).toMatch(/Task timed out after 1.50 seconds/);
    expect(alive(err.pid)).toBe(false);
  });

  it('spawns another worker for a concurrent invocation, and enforces maxConcurrency', async () => {
    const [a, b] = (await Promise.all([
      warm.invoke(ARN, { mode: 'sleep', sleepMs: 300 }, opts()),
      warm.invoke(ARN, { mode: 'sleep', sleepMs: 300 }, opts()),
    ])) as Answer[];
    expect(a?.pid).not.toBe(b?.pid);
    const first = warm.invoke('limited', { mode: 'sleep', sleepMs: 200 }, opts());
    await expect(warm.invoke('limited', {}, opts())).rejects.toMatchObject({
      name: 'Lambda.TooManyRequestsException',
    });
    await first;
  });

  it('rejects an unknown function as Lambda.ResourceNotFoundException', async () => {
    await expect(warm.invoke('nope', {}, opts())).rejects.toMatchObject({
      name: 'Lambda.ResourceNotFoundException',
    });
    expect(functionNameOf('arn:aws:lambda:eu-west-1:123456789012:function:run-step:live')).toBe('run-step');
  });

  it('SIGKILLs a worker at an armed fault point and acks the others', async () => {
    const points: FaultPointEvent[] = [];
    const fired: FaultPointEvent[] = [];
    warm.events.on('fault-point', (e) => points.push(e));
    warm.events.on('fault-fired', (e) => fired.push(e));
    warm.arm({ functionName: ARN, point: 'mid-action', match: { jobId: 'job-7', stepIndex: 2 } });

    const other = (await warm.invoke(ARN, { mode: 'faults', points: 3, jobId: 'job-8' }, opts())) as Answer;
    expect(other.pid).toBeGreaterThan(0);
    expect(fired).toHaveLength(0);

    const err = await rejection<LambdaUnknownError>(
      warm.invoke(ARN, { mode: 'faults', points: 5, jobId: 'job-7' }, opts()),
    );
    expect(err).toMatchObject({ name: 'Lambda.Unknown', reason: 'fault' });
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({
      point: 'mid-action',
      info: { jobId: 'job-7', stepIndex: 2 },
      pid: err.pid,
    });
    // Points 0 and 1 were acked; the process died at 2 and never reached 3.
    expect(points.filter((p) => p.info.jobId === 'job-7').map((p) => p.info.stepIndex)).toEqual([0, 1, 2]);
    expect(alive(err.pid)).toBe(false);

    // `times: 1` by default: the same invocation now runs through.
    const again = (await warm.invoke(ARN, { mode: 'faults', points: 5, jobId: 'job-7' }, opts())) as Answer;
    expect(again.pid).not.toBe(err.pid);
  });

  it('acks an unmatched fault point in one IPC round trip', async () => {
    warm.disarm();
    await warm.invoke(ARN, { mode: 'faults', points: 1, jobId: 'warmup' }, opts());
    const n = 300;
    const r = (await warm.invoke(ARN, { mode: 'faults', points: n, jobId: 'rtt' }, opts())) as Answer & {
      loopMs: number;
    };
    const perPoint = r.loopMs / n;
    console.log(`fault point round trip: ${perPoint.toFixed(3)} ms (mean of ${n}, measured in the worker)`);
    expect(perPoint).toBeGreaterThan(0);
    expect(perPoint).toBeLessThan(20);
  });

  it('keeps provisioned workers initialized ahead of invocations, and replaces one that dies', async () => {
    const runner = createLambdaRunner({
      mode: 'warm',
      output: 'ignore',
      functions: { behaviors: { entry: ENTRY, timeoutMs: 5000, provisioned: 2 } },
    });
    const pids = trackPids(runner);
    try {
      const ready = (): number => runner.workers().filter((w) => w.provisioned && w.initialized).length;
      await expect.poll(ready, { timeout: 15_000 }).toBe(2);
      // The first invocation finds one warm: no new process, made for provisioned concurrency.
      const a = (await runner.invoke('behaviors', {}, opts())) as Answer & { initialization: string };
      expect(a.initialization).toBe('provisioned-concurrency');
      expect(a.invocations).toBe(1);
      expect(pids.size).toBe(2);

      // Its process dies mid-invocation: the retry finds the other provisioned worker at once,
      // and the dead one is replaced in the background.
      await expect(runner.invoke('behaviors', { mode: 'exit' }, opts())).rejects.toMatchObject({
        name: 'Lambda.Unknown',
      });
      const b = (await runner.invoke('behaviors', {}, opts())) as Answer & { initialization: string };
      expect(b.initialization).toBe('provisioned-concurrency');
      await expect.poll(ready, { timeout: 15_000 }).toBe(2);
      expect(pids.size).toBe(3);

      // Down to none: the idle provisioned workers go.
      await runner.provision('behaviors', 0);
      await expect
        .poll(() => runner.workers().filter((w) => w.provisioned).length, { timeout: 5000 })
        .toBe(0);

      // They go on as ordinary warm workers until retired: all but the most recently used one.
      const before = runner.workers().map((w) => w.pid);
      expect(before).toHaveLength(2);
      expect(await runner.retireIdle('behaviors', 1)).toBe(1);
      const kept = runner.workers().map((w) => w.pid);
      expect(kept).toHaveLength(1);
      for (const pid of before.filter((p) => !kept.includes(p))) expect(alive(pid)).toBe(false);
      // The one kept serves the next invocation; once it is retired too, the next starts a process.
      const c = (await runner.invoke('behaviors', {}, opts())) as Answer & { pid: number };
      expect(c.pid).toBe(kept[0]);
      expect(await runner.retireIdle('behaviors')).toBe(1);
      expect(runner.workers()).toEqual([]);
      const d = (await runner.invoke('behaviors', {}, opts())) as Answer & { initialization: string };
      expect(d.initialization).toBe('on-demand');
      expect(pids.size).toBe(4);
      await expect(runner.retireIdle('behaviors', -1)).rejects.toThrow(RangeError);
      await expect(runner.retireIdle('nope')).rejects.toMatchObject({
        name: 'Lambda.ResourceNotFoundException',
      });
    } finally {
      await runner.stop();
    }
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  it('leaves no child process behind after stop()', async () => {
    const busy = rejection(warm.invoke(ARN, { mode: 'sleep', sleepMs: 5000 }, opts()));
    await expect.poll(() => warm.workers().some((w) => w.busy), { timeout: 5000 }).toBe(true);
    await warm.stop();
    await cold.stop();
    expect((await busy).name).toBe('Lambda.Unknown');
    expect(warm.workers()).toEqual([]);
    expect(warmPids.size).toBeGreaterThan(3);
    expect(coldPids.size).toBe(2);
    for (const pid of [...warmPids, ...coldPids]) expect(alive(pid)).toBe(false);
    await expect(warm.invoke(ARN, {}, opts())).rejects.toMatchObject({ name: 'LambdaRunnerStoppedError' });
  });
});
