/**
 * V8's compile cache for a function's bundle (Node 22's module compile cache): built at bundle
 * time by the Node that will run the bundle, written next to it, read by Node at each cold
 * start through `NODE_COMPILE_CACHE`, so the bundle and the modules shipped beside it
 * (playwright-core) are deserialized instead of parsed and compiled. Shared by the stack's
 * bundling (`belay:lambdaNode`) and the local Lambda runner, which builds and reads it as a
 * deployment does.
 *
 * A cache only holds if everything in its key matches the Node that reads it, and otherwise
 * Node compiles as without one (no error, no warning):
 * - Node's version and architecture, and V8's flags: they name the cache's folder
 *   (`v22.23.5-x64-<flags hash>-0`). Lambda starts Node with flags sized from the function's
 *   memory ({@link lambdaNodeFlags}), so the cache is built with the same.
 * - each file's absolute path (a CommonJS module) or URL (an ES module): they name its entry,
 *   so a cache built in a build folder is moved to the paths the function runs from
 *   (`/var/task`, {@link CompileCacheBuild.relocateTo}).
 * - each file's content: an entry whose source changed is rejected and the file compiled.
 *
 * Only the files the function ships are kept: the AWS SDK comes from Lambda's runtime, whose
 * files and version are the runtime's, so entries for it would never match there.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';

const run = promisify(execFile);

/** The cache's folder next to a deployed bundle (`/var/task/.node-compile-cache`). */
export const COMPILE_CACHE_DIR = '.node-compile-cache';

/** Where Lambda puts a function's code: the paths a deployed cache's entries must name. */
export const LAMBDA_TASK_ROOT = '/var/task';

/**
 * Node's flags as Lambda's Node.js runtimes start it for a function of `memoryMb` (their
 * bootstrap: a tenth of the memory for the young generation, half of that a semi-space, the
 * rest the old generation). V8's flags are part of the compile cache's key.
 *
 * @example
 * lambdaNodeFlags(1024);
 * // ['--expose-gc', '--max-http-header-size', '81920', '--max-semi-space-size=51', '--max-old-space-size=922']
 */
export function lambdaNodeFlags(memoryMb: number): string[] {
  if (!Number.isInteger(memoryMb) || memoryMb < 128)
    throw new RangeError('memoryMb must be an integer >= 128');
  const newSpace = Math.floor(memoryMb / 10);
  return [
    '--expose-gc',
    '--max-http-header-size',
    '81920',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memoryMb - newSpace}`,
  ];
}

/**
 * The name of a file's entry in Node 22's compile cache: CRC32 of the code type (a byte: 0
 * CommonJS, 1 ES module) followed by the file's absolute path (CommonJS) or its `file:` URL (an
 * ES module), as eight hex digits. Node's own scheme, not an API: the builder checks it against
 * what Node wrote and refuses a Node that names entries otherwise.
 */
export function compileCacheKey(kind: 'commonjs' | 'esm', file: string): string {
  const name = kind === 'esm' ? pathToFileURL(file).href : file;
  const crc = crc32(Buffer.concat([Buffer.from([kind === 'esm' ? 1 : 0]), Buffer.from(name, 'utf8')]));
  return crc.toString(16).padStart(8, '0');
}

/** What a cache is built from. */
export interface CompileCacheBuild {
  /** The Node that will run the bundle (the same version and architecture as the function's runtime). */
  nodePath: string;
  /** The bundle (an ES module). */
  bundle: string;
  /** Packages shipped beside the bundle and loaded by it at run time (`playwright-core`). */
  runtimeModules: readonly string[];
  /** The function's memory: Lambda's flags follow from it. */
  memoryMb: number;
  /** Where the cache is written (replaced if there). */
  cacheDir: string;
  /**
   * The folder the bundle's folder will be at when it runs (`/var/task`): entries are renamed
   * to name the files there. Default: where they are.
   */
  relocateTo?: string;
}

/** What a build wrote. */
export interface CompileCacheManifest {
  /** Node's version that built (and must read) it, e.g. `v22.23.5`. */
  node: string;
  /** The folder Node reads: `v22.23.5-x64-<flags hash>-0`. */
  folder: string;
  flags: string[];
  /** Size and modification time of the bundle it was built from (a rebuilt bundle needs a new cache). */
  bundle: { size: number; mtimeMs: number };
  /** The runtime modules' versions. */
  runtimeModules: Record<string, string>;
  /** Entries kept: the bundle's and each runtime module file's. */
  entries: number;
  /** The bundle's folder as the entries name it. */
  root: string;
}

/** The cache could not be built as asked. */
export class CompileCacheError extends Error {
  constructor(
    readonly bundle: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`compile cache of ${bundle}: ${reason}`, options);
    this.name = 'CompileCacheError';
  }
}

/** The manifest file inside a cache folder. */
export const MANIFEST_FILE = 'belay-compile-cache.json';

/**
 * Loads the bundle and its runtime modules in a Node with the cache on, so that Node writes an
 * entry for every file it compiles; prints what it loaded. The bundle's top level runs (an
 * engine handler only defines itself there); an error it throws still leaves the bundle
 * compiled, and is reported.
 */
const LOADER = `
import { writeFileSync } from 'node:fs';
import * as mod from 'node:module';
import { pathToFileURL } from 'node:url';
const [report, bundle, ...modules] = process.argv.slice(1);
let evaluated = true;
try { await import(pathToFileURL(bundle).href); } catch (err) { evaluated = String(err && err.name); }
const require = mod.createRequire(bundle);
for (const name of modules) require(name);
mod.flushCompileCache?.();
writeFileSync(report, JSON.stringify({ dir: mod.getCompileCacheDir?.(), cjs: Object.keys(require.cache), evaluated, node: process.version }));
`;

/**
 * Builds the compile cache of `build.bundle` with `build.nodePath`, keeping only the entries of
 * the bundle and its runtime modules, and renames them for `relocateTo` when given.
 *
 * @throws CompileCacheError when that Node has no compile cache, or names entries otherwise than
 * {@link compileCacheKey} expects
 *
 * @example
 * await buildCompileCache({
 *   nodePath: '/opt/node-v22.23.5-linux-arm64/bin/node',
 *   bundle: 'cdk.out/asset.1234/index.mjs',
 *   runtimeModules: ['playwright-core'],
 *   memoryMb: 1024,
 *   cacheDir: 'cdk.out/asset.1234/.node-compile-cache',
 *   relocateTo: '/var/task',
 * });
 */
export async function buildCompileCache(build: CompileCacheBuild): Promise<CompileCacheManifest> {
  const { bundle } = build;
  const flags = lambdaNodeFlags(build.memoryMb);
  await mkdir(dirname(build.cacheDir), { recursive: true });
  const work = await mkdtemp(join(dirname(build.cacheDir), `.${basename(build.cacheDir)}-build-`));
  try {
    const raw = join(work, 'raw');
    let loaded: { dir?: string; cjs: string[]; evaluated: true | string; node: string };
    const report = join(work, 'loaded.json');
    try {
      await run(
        build.nodePath,
        [...flags, '--input-type=module', '--eval', LOADER, report, bundle, ...build.runtimeModules],
        {
          // Nothing of this machine's: no credentials, no options the function would not have.
          env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: raw },
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      loaded = JSON.parse(await readFile(report, 'utf8')) as typeof loaded;
    } catch (err) {
      throw new CompileCacheError(bundle, `loading it with ${build.nodePath} failed`, { cause: err });
    }
    if (!loaded.dir)
      throw new CompileCacheError(bundle, `${loaded.node} has no compile cache (Node 22.1 or later)`);
    const folder = basename(loaded.dir);
    const keep = new Map<string, string>([[compileCacheKey('esm', bundle), 'esm']]);
    const moduleRoots = build.runtimeModules.map((name) =>
      dirname(createRequire(bundle).resolve(`${name}/package.json`)),
    );
    for (const file of loaded.cjs) {
      if (moduleRoots.some((root) => file.startsWith(root + sep)))
        keep.set(compileCacheKey('commonjs', file), file);
    }
    const written = new Set(await readdir(loaded.dir));
    if (!written.has(compileCacheKey('esm', bundle)))
      throw new CompileCacheError(
        bundle,
        `${loaded.node} wrote no entry named as expected for the bundle: its compile cache names entries otherwise`,
      );
    const out = join(work, 'out', folder);
    await mkdir(out, { recursive: true });
    const from = dirname(bundle);
    const to = build.relocateTo ?? from;
    for (const [key, file] of keep) {
      if (!written.has(key)) continue;
      const moved =
        file === 'esm'
          ? compileCacheKey('esm', join(to, relative(from, bundle)))
          : compileCacheKey('commonjs', join(to, relative(from, file)));
      await rename(join(loaded.dir, key), join(out, moved));
    }
    const bundleStat = await stat(bundle);
    const manifest: CompileCacheManifest = {
      node: loaded.node,
      folder,
      flags,
      bundle: { size: bundleStat.size, mtimeMs: bundleStat.mtimeMs },
      runtimeModules: Object.fromEntries(
        await Promise.all(
          build.runtimeModules.map(async (name, i) => [name, await packageVersion(moduleRoots[i] as string)]),
        ),
      ),
      entries: (await readdir(out)).length,
      root: to,
    };
    await writeFile(join(work, 'out', MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await rm(build.cacheDir, { recursive: true, force: true });
    try {
      await rename(join(work, 'out'), build.cacheDir);
    } catch (err) {
      // Another build of the same cache moved its own into place first: that one is as good.
      const other = await readCompileCacheManifest(build.cacheDir);
      if (!other) throw err;
      return other;
    }
    return manifest;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The manifest of the cache at `cacheDir`, or undefined when there is none. */
export async function readCompileCacheManifest(cacheDir: string): Promise<CompileCacheManifest | undefined> {
  try {
    return JSON.parse(await readFile(join(cacheDir, MANIFEST_FILE), 'utf8')) as CompileCacheManifest;
  } catch {
    return undefined;
  }
}

async function packageVersion(root: string): Promise<string> {
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version?: string };
  return version ?? 'unknown';
}
