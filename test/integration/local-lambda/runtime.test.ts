/**
 * The local Lambda runner on Lambda's Node (fetched by `ensureLambdaNode`) reading each bundle's
 * compile cache through a private copy, started with Lambda's flags for the function's memory,
 * and reporting what each invocation used: its process's CPU and its AWS calls, attempt by attempt.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaNodeFlags } from '../../../lambdas/compile-cache.ts';
import type { InvocationEndedEvent } from '../../../local/lambda/events.ts';
import { ensureLambdaNode, type LambdaNode } from '../../../local/lambda/lambda-node.ts';
import { createLambdaRunner, type LambdaRunner } from '../../../local/lambda/runner.ts';

const ARN = 'arn:aws:lambda:us-east-1:000000000000:function:behaviors';
const opts = () => ({ timeoutMs: 20_000, signal: new AbortController().signal });

interface Answer {
  pid: number;
  node: string;
  execArgv: string[];
  compileCacheDir: string | null;
}

let node: LambdaNode;
let runner: LambdaRunner;
const pids = new Set<number>();
const ended: InvocationEndedEvent[] = [];

beforeAll(async () => {
  node = await ensureLambdaNode();
  runner = createLambdaRunner({
    mode: 'cold',
    output: 'ignore',
    runtime: { node, compileCache: true },
    functions: {
      [ARN]: { entry: 'test/fixtures/local-lambda/behaviors.ts', timeoutMs: 20_000, memoryMb: 512 },
    },
  });
  runner.events.on('worker-spawned', (e) => pids.add(e.pid));
  runner.events.on('invocation-ended', (e) => ended.push(e));
}, 180_000);

afterAll(async () => {
  await runner?.stop();
  for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
});

describe('Local Lambda runner: the runtime', () => {
  it("runs workers on Lambda's Node with Lambda's flags, each reading a private copy of the compile cache", async () => {
    const a = (await runner.invoke(ARN, {}, opts())) as Answer;
    expect(a.node).toBe(`v${node.version}`);
    expect(a.execArgv).toEqual(expect.arrayContaining(lambdaNodeFlags(512)));
    expect(a.compileCacheDir).toMatch(/\.compile-cache-runs\/[0-9a-f-]+\/v22\.\d+\.\d+-\w+-[0-9a-f]+-0$/);
    const b = (await runner.invoke(ARN, {}, opts())) as Answer;
    expect(b.pid).not.toBe(a.pid);
    expect(b.compileCacheDir).not.toBe(a.compileCacheDir);
    // Each copy goes with its worker.
    await expect.poll(() => existsSync(a.compileCacheDir as string), { timeout: 5000 }).toBe(false);
  });

  it('reports the CPU and the AWS calls of each invocation, every attempt counted', async () => {
    ended.length = 0;
    await runner.invoke(ARN, { mode: 'aws' }, opts());
    expect(ended).toHaveLength(1);
    expect(ended[0]?.usage?.awsCalls).toEqual({ 'DynamoDB.ListTables': 2 });
    expect(ended[0]?.usage?.cpuMs).toBeGreaterThan(0);
  });

  it("runs on this process's Node, with no cache, once the runtime is set back", async () => {
    await runner.setRuntime({});
    const a = (await runner.invoke(ARN, {}, opts())) as Answer;
    expect(a.node).toBe(process.version);
    expect(a.compileCacheDir).toBeNull();
  });
});
