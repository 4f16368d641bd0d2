/**
 * The Node the benchmark's stacks run their functions on. By default Lambda's own (Node 22, from
 * the npm package `node-linux-<arch>`) reading each bundle's compile cache, as a deployment with
 * `belay:lambdaNode` does; the cold section also runs the same Node without the cache and this
 * project's Node 20, side by side.
 */
import { ensureLambdaNode } from '../../local/lambda/lambda-node.ts';
import type { LambdaRuntime } from '../../local/lambda/types.ts';

export const RUNTIME_NAMES = ['node22-cache', 'node22', 'node20'] as const;
export type RuntimeName = (typeof RUNTIME_NAMES)[number];

/** How a runtime is named in the report. */
export function runtimeLabel(name: RuntimeName, lambdaNodeVersion?: string): string {
  const v22 = `Node ${lambdaNodeVersion ?? '22'}`;
  if (name === 'node22-cache') return `${v22} with the compile cache`;
  if (name === 'node22') return `${v22} without the cache`;
  return `Node ${process.versions.node} (this project's)`;
}

/** The local Lambda runner's runtime for `name`, fetching Lambda's Node when it needs it. */
export async function lambdaRuntime(name: RuntimeName, log: (line: string) => void): Promise<LambdaRuntime> {
  if (name === 'node20') return {};
  const node = await ensureLambdaNode({ log });
  return { node, compileCache: name === 'node22-cache' };
}
