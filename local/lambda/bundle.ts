/**
 * Bundles a handler the way the stack deploys it (one minified ESM file by esbuild, the AWS
 * SDK and playwright-core left out, the same aliases: `lambdas/bundling.ts`), so a local worker
 * loads what a Lambda cold start loads, not a tree of TypeScript files through a loader.
 *
 * Bundles are cached under `.local/bundles/` by entry, and rebuilt when any file that went
 * into one changed (size or modification time), so a stack starts without rebuilding an
 * unchanged handler. Concurrent builders (test files run in parallel) write to a temporary
 * name and rename, so a reader never sees half a bundle.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { type BuildOptions, type BuildResult, build, version as ESBUILD_VERSION } from 'esbuild';
import {
  BUNDLE_ALIASES,
  BUNDLE_NODE_PATHS,
  bundleAliases,
  ESM_REQUIRE_BANNER,
  PLAYWRIGHT_RUNTIME_MODULES,
  PROVIDED_MODULES,
} from '../../lambdas/bundling.ts';
import { REPO_ROOT } from './worker-process.ts';

/** Where bundles are cached (inside the repository, so bare imports of externals resolve to its node_modules). */
export const BUNDLE_DIR = join(REPO_ROOT, '.local', 'bundles');

interface Manifest {
  /** Repository-relative input path -> `size:mtimeMs`. */
  inputs: Record<string, string>;
}

async function fingerprint(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}

async function upToDate(manifestPath: string, outfile: string): Promise<boolean> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Manifest;
    await stat(outfile);
  } catch {
    return false;
  }
  const entries = Object.entries(manifest.inputs);
  const current = await Promise.all(entries.map(([path]) => fingerprint(resolve(REPO_ROOT, path))));
  return entries.every(([, print], i) => current[i] === print);
}

/**
 * As the stack bundles (`BelayFunction`), for this Node: the source map in a file beside the
 * bundle, as deployed, so a cold start reads what a deployed one reads (an inline map would
 * more than double the file Node decodes and compiles). Node applies it with
 * `--enable-source-maps` in the function's `NODE_OPTIONS`, as in Lambda.
 */
const BUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${process.versions.node.split('.')[0]}` as string,
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  minify: true,
  sourcemap: 'linked',
  sourcesContent: false,
  external: [...PROVIDED_MODULES, ...PLAYWRIGHT_RUNTIME_MODULES],
  alias: { ...BUNDLE_ALIASES },
  nodePaths: [...BUNDLE_NODE_PATHS],
} satisfies BuildOptions;

/** What a bundle is built with besides its entry. */
export interface BundleOptions {
  /**
   * The registry module generated for the stack's playbooks (`writeRegistryModule`): a handler's
   * `#belay/playbooks`. Without it the bundle gets no playbooks (right for the worker script).
   */
  playbookRegistry?: string;
  /** esbuild's target: the Node the bundle runs on, e.g. `node22` (default: this process's major). */
  target?: string;
}

const building = new Map<string, Promise<string>>();

/**
 * The bundle of `entry` (a path from the repository root or absolute), built if missing or
 * stale. Resolves to the bundle's absolute path.
 *
 * @example
 * const file = await bundleHandler('lambdas/run-step/handler.ts');
 * // <repo>/.local/bundles/lambdas-run-step-handler-<hash>.mjs
 */
export function bundleHandler(entry: string, options: BundleOptions = {}): Promise<string> {
  const absolute = resolve(REPO_ROOT, entry);
  const buildOptions = {
    ...BUILD_OPTIONS,
    target: options.target ?? BUILD_OPTIONS.target,
    alias: options.playbookRegistry ? bundleAliases(options.playbookRegistry) : { ...BUILD_OPTIONS.alias },
  };
  const key = JSON.stringify([absolute, buildOptions.alias, buildOptions.target]);
  let pending = building.get(key);
  if (!pending) {
    // Callers at the same time share one build; a later call checks the inputs again.
    pending = buildIfStale(absolute, buildOptions).finally(() => building.delete(key));
    building.set(key, pending);
  }
  return pending;
}

async function buildIfStale(entry: string, buildOptions: typeof BUILD_OPTIONS): Promise<string> {
  const rel = relative(REPO_ROOT, entry);
  const slug = rel.replace(/\.[cm]?[jt]s$/, '').replace(/[^A-Za-z0-9]+/g, '-');
  // The options (the playbook registry among them) and the esbuild version are part of the
  // name: changing either builds anew.
  const hash = createHash('sha256')
    .update(JSON.stringify([entry, buildOptions, ESBUILD_VERSION]))
    .digest('hex')
    .slice(0, 8);
  const outfile = join(BUNDLE_DIR, `${slug}-${hash}.mjs`);
  const manifestPath = `${outfile}.inputs.json`;
  if (await upToDate(manifestPath, outfile)) return outfile;

  await mkdir(BUNDLE_DIR, { recursive: true });
  const startedMs = Date.now();
  // Built under its own name in a folder of its own (the bundle names its map), then moved:
  // the map first, so a reader who finds the bundle finds its map.
  const tempDir = await mkdtemp(join(BUNDLE_DIR, `.build-${process.pid}-`));
  const temp = join(tempDir, basename(outfile));
  let result: BuildResult<{ metafile: true }>;
  try {
    result = await build({
      ...buildOptions,
      entryPoints: [entry],
      outfile: temp,
      absWorkingDir: REPO_ROOT,
      metafile: true,
      logLevel: 'silent',
    });
    await rename(`${temp}.map`, `${outfile}.map`);
    await rename(temp, outfile);
  } finally {
    await rm(tempDir, { recursive: true, force: true });
  }
  const inputs: Record<string, string> = {};
  await Promise.all(
    Object.keys(result.metafile.inputs).map(async (input) => {
      const print = await fingerprint(resolve(REPO_ROOT, input));
      if (print) inputs[input] = print;
    }),
  );
  // A file edited while esbuild read it may be in the bundle in its old state: no manifest, so
  // the next start builds again.
  if (Object.values(inputs).some((print) => Number(print.split(':')[1]) >= startedMs)) return outfile;
  await writeFile(`${manifestPath}.${process.pid}.tmp`, JSON.stringify({ inputs } satisfies Manifest));
  await rename(`${manifestPath}.${process.pid}.tmp`, manifestPath);
  return outfile;
}
