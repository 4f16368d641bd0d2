/**
 * `npm run compile-cache -- --bundle <dir>/index.mjs --node <node> --memory <MB> [--runtime-modules a,b] [--relocate /var/task]`:
 * builds V8's compile cache of a function's bundle with the Node that will run it
 * (`lambdas/compile-cache.ts`), into `.node-compile-cache/` beside the bundle. The stack's
 * bundling runs it for each function when `belay:lambdaNode` names that Node; `--lambda-node`
 * fetches Lambda's Node 22 from npm instead (for a bundle that runs on this machine's
 * architecture). Exit status 0 when written, 1 otherwise (the message says why).
 */
import { dirname, join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { buildCompileCache, COMPILE_CACHE_DIR } from '../../lambdas/compile-cache.ts';
import { ensureLambdaNode } from '../../local/lambda/lambda-node.ts';

interface Options {
  bundle: string;
  node?: string;
  lambdaNode: boolean;
  memory: number;
  runtimeModules: string[];
  relocate?: string;
}

function memory(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 128 || n > 10_240)
    throw new InvalidArgumentError('not a Lambda memory size (128-10240 MB)');
  return n;
}

const options = new Command()
  .name('npm run compile-cache --')
  .description("Build V8's compile cache of a function's bundle with the Node that runs it.")
  .requiredOption('--bundle <file>', "the function's bundle (an ES module)")
  .option(
    '--node <path>',
    'the Node binary the function runs on (its version, architecture and flags key the cache)',
  )
  .option('--lambda-node', "fetch Lambda's Node 22 from npm (node-linux-<arch>) and use it", false)
  .requiredOption('--memory <MB>', "the function's memory: Lambda sizes Node's heap flags from it", memory)
  .option(
    '--runtime-modules <list>',
    'packages shipped beside the bundle, comma-separated (e.g. playwright-core)',
    (v: string) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    [],
  )
  .option('--relocate <dir>', "the folder the bundle's folder will be at when it runs (Lambda: /var/task)")
  .parse(process.argv.slice(2), { from: 'user' })
  .opts<Options>();

try {
  if (!options.node && !options.lambdaNode) throw new Error('give --node <path> or --lambda-node');
  const nodePath = options.node ?? (await ensureLambdaNode({ log: (l) => console.error(l) })).execPath;
  const bundle = resolve(options.bundle);
  const manifest = await buildCompileCache({
    nodePath,
    bundle,
    runtimeModules: options.runtimeModules,
    memoryMb: options.memory,
    cacheDir: join(dirname(bundle), COMPILE_CACHE_DIR),
    ...(options.relocate ? { relocateTo: options.relocate } : {}),
  });
  console.log(
    `${join(dirname(bundle), COMPILE_CACHE_DIR)}: ${manifest.entries} entries for Node ${manifest.node} (${manifest.folder}), named for ${manifest.root}`,
  );
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
}
