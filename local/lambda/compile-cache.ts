/**
 * The local Lambda runner's side of the compile cache (`lambdas/compile-cache.ts`): each bundle's
 * cache, built with the workers' Node and Lambda's flags for the function's memory, kept next to
 * the bundle and rebuilt when the bundle, that Node or a runtime module changes; and, per worker,
 * a private copy of it (hard links) for Node to read. Node writes entries for what it compiles
 * that the cache lacks (the AWS SDK, the worker script); in Lambda the cache's folder is
 * read-only and nothing is added, so no worker may add to the shared one either.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, linkSync, mkdirSync, readdirSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  buildCompileCache,
  type CompileCacheManifest,
  lambdaNodeFlags,
  readCompileCacheManifest,
} from '../../lambdas/compile-cache.ts';
import { BUNDLE_DIR } from './bundle.ts';

/** A bundle's cache, ready to be read. */
export interface BundleCache {
  /** The cache's root (what `NODE_COMPILE_CACHE` names). */
  dir: string;
  manifest: CompileCacheManifest;
}

/** Where workers' private copies are made (on the bundles' filesystem, for hard links). */
const RUNS_DIR = join(BUNDLE_DIR, '.compile-cache-runs');

const building = new Map<string, Promise<BundleCache>>();

/**
 * The compile cache of `bundle` for `node` and a function of `memoryMb`, built if missing or
 * stale. Callers at the same time share one build.
 */
export function ensureBundleCache(
  bundle: string,
  node: { execPath: string; version: string },
  memoryMb: number,
  runtimeModules: readonly string[],
): Promise<BundleCache> {
  const dir = `${bundle}.compile-cache-v${node.version}-${memoryMb}mb`;
  let pending = building.get(dir);
  if (!pending) {
    pending = (async () => {
      const existing = await readCompileCacheManifest(dir);
      if (existing && (await fresh(existing, bundle, node.version, memoryMb, runtimeModules)))
        return { dir, manifest: existing };
      const manifest = await buildCompileCache({
        nodePath: node.execPath,
        bundle,
        runtimeModules,
        memoryMb,
        cacheDir: dir,
      });
      return { dir, manifest };
    })().finally(() => building.delete(dir));
    building.set(dir, pending);
  }
  return pending;
}

async function fresh(
  manifest: CompileCacheManifest,
  bundle: string,
  version: string,
  memoryMb: number,
  runtimeModules: readonly string[],
): Promise<boolean> {
  const s = await stat(bundle).catch(() => undefined);
  if (!s || s.size !== manifest.bundle.size || s.mtimeMs !== manifest.bundle.mtimeMs) return false;
  if (manifest.node !== `v${version}`) return false;
  if (JSON.stringify(manifest.flags) !== JSON.stringify(lambdaNodeFlags(memoryMb))) return false;
  if (Object.keys(manifest.runtimeModules).sort().join() !== [...runtimeModules].sort().join()) return false;
  for (const [name, version] of Object.entries(manifest.runtimeModules)) {
    const pkg = createRequire(bundle).resolve(`${name}/package.json`);
    const current = (JSON.parse(await readFile(pkg, 'utf8')) as { version?: string }).version;
    if (current !== version) return false;
  }
  return true;
}

/**
 * A private copy of `cache` for one worker (hard links, so nothing is copied); `remove` deletes it
 * once the worker has exited.
 */
export function privateCacheCopy(cache: BundleCache): { dir: string; remove: () => Promise<void> } {
  const dir = join(RUNS_DIR, randomUUID());
  const from = join(cache.dir, cache.manifest.folder);
  const to = join(dir, cache.manifest.folder);
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    try {
      linkSync(join(from, name), join(to, name));
    } catch {
      copyFileSync(join(from, name), join(to, name));
    }
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
