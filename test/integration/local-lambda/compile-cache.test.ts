/**
 * The compile cache built with Lambda's Node (fetched from npm by `ensureLambdaNode`), on a small
 * bundle with a runtime module beside it and a dependency from elsewhere (as the runtime's AWS
 * SDK): Node reads the kept entries where the function runs, after the cache was renamed for
 * that folder, and a Node with other flags or another version runs the bundle as without one.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCompileCache, lambdaNodeFlags } from '../../../lambdas/compile-cache.ts';
import { ensureLambdaNode, type LambdaNode } from '../../../local/lambda/lambda-node.ts';

const run = promisify(execFile);

let root: string;
let node: LambdaNode;

/** A function's folder: `index.mjs` loading `shipped` (beside it) and `provided` (from elsewhere). */
async function functionFolder(dir: string, providedDir: string): Promise<void> {
  await mkdir(join(dir, 'node_modules', 'shipped'), { recursive: true });
  await writeFile(
    join(dir, 'node_modules', 'shipped', 'package.json'),
    JSON.stringify({ name: 'shipped', version: '1.2.3', main: 'index.js' }),
  );
  const body = Array.from({ length: 200 }, (_, i) => `exports.f${i} = (x) => x * ${i} + ${i};`).join('\n');
  await writeFile(join(dir, 'node_modules', 'shipped', 'index.js'), body);
  await writeFile(
    join(dir, 'index.mjs'),
    [
      "import { createRequire } from 'node:module';",
      `const provided = createRequire(import.meta.url)(${JSON.stringify(join(providedDir, 'provided.js'))});`,
      "export const handler = () => createRequire(import.meta.url)('shipped').f7(provided.base);",
      'console.log(handler());',
    ].join('\n'),
  );
}

beforeAll(async () => {
  node = await ensureLambdaNode();
  root = await mkdtemp(join(tmpdir(), 'belay-compile-cache-'));
  await mkdir(join(root, 'runtime'), { recursive: true });
  await writeFile(join(root, 'runtime', 'provided.js'), 'exports.base = 6;');
  await functionFolder(join(root, 'build'), join(root, 'runtime'));
}, 180_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** Runs the deployed copy with the cache on; Node's own debug lines say what it read. */
async function runDeployed(flags: string[], execPath = node.execPath, cache = join(root, 'task', '.cache')) {
  const { stdout, stderr } = await run(execPath, [...flags, join(root, 'task', 'index.mjs')], {
    env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: cache, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
  });
  const accepted = stderr.split('\n').filter((l) => /reading cache from .*success/.test(l));
  return { output: stdout.trim(), accepted };
}

describe('Function: buildCompileCache', () => {
  it('keeps the bundle and its runtime modules only, renamed for the folder the function runs from', async () => {
    const manifest = await buildCompileCache({
      nodePath: node.execPath,
      bundle: join(root, 'build', 'index.mjs'),
      runtimeModules: ['shipped'],
      memoryMb: 1024,
      cacheDir: join(root, 'build', '.cache'),
      relocateTo: join(root, 'task'),
    });
    expect(manifest).toMatchObject({
      node: `v${node.version}`,
      flags: lambdaNodeFlags(1024),
      runtimeModules: { shipped: '1.2.3' },
      entries: 2,
      root: join(root, 'task'),
    });
    expect(manifest.folder).toMatch(new RegExp(`^v${node.version}-${process.arch}-[0-9a-f]+-0$`));
    expect((await readdir(join(root, 'build', '.cache', manifest.folder))).length).toBe(2);

    // Deployed: the same files at the new folder, the cache beside them.
    await cp(join(root, 'build'), join(root, 'task'), { recursive: true });
    const { output, accepted } = await runDeployed(lambdaNodeFlags(1024));
    expect(output).toBe('49');
    expect(accepted.join('\n')).toContain(`${join(root, 'task', 'index.mjs')}`);
    expect(accepted.join('\n')).toContain(join(root, 'task', 'node_modules', 'shipped', 'index.js'));
    // The dependency from elsewhere (the runtime's AWS SDK, in Lambda) was not kept.
    expect(accepted.join('\n')).not.toContain('provided.js');
  });

  it('is passed over without a word by a Node started with other flags (another memory size), and by Node 20', async () => {
    await rm(join(root, 'scratch'), { recursive: true, force: true });
    await cp(join(root, 'task', '.cache'), join(root, 'scratch'), { recursive: true });
    const other = await runDeployed(lambdaNodeFlags(2048), node.execPath, join(root, 'scratch'));
    expect(other.output).toBe('49');
    expect(other.accepted).toEqual([]);
    const older = await runDeployed(lambdaNodeFlags(1024), process.execPath, join(root, 'scratch'));
    expect(older.output).toBe('49');
    expect(older.accepted).toEqual([]);
  });
});
