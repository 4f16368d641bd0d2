import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUNDLE_NODE_PATHS,
  bundleAliases,
  ESM_REQUIRE_BANNER,
  PLAYWRIGHT_RUNTIME_MODULES,
  PROVIDED_MODULES,
} from '../../../lambdas/bundling.ts';
import { registryModuleForDirs } from '../../../lambdas/lib/playbooks/discovery/registry-module.ts';
import { BUNDLE_DIR, bundleHandler } from '../../../local/lambda/bundle.ts';
import { createLambdaRunner } from '../../../local/lambda/runner.ts';
import { REPO_ROOT } from '../../../local/lambda/worker-process.ts';

// Inside the repository (bare imports resolve to its node_modules), one directory per run.
const dir = join(REPO_ROOT, '.local', `bundle-test-${process.pid}`);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  // This run's bundles of those files (named after their paths) go too.
  const mine = (await readdir(BUNDLE_DIR)).filter((f) => f.includes(`-bundle-test-${process.pid}-`));
  await Promise.all(mine.map((f) => rm(join(BUNDLE_DIR, f), { force: true })));
});

async function handlerFile(name: string, body: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, name);
  await writeFile(file, body);
  return file;
}

/** Imports a bundle in a fresh Node process and calls its handler. */
async function call(bundle: string): Promise<unknown> {
  const script = `import(${JSON.stringify(pathToFileURL(bundle).href)}).then((m) => m.handler()).then((r) => console.log(JSON.stringify(r)))`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], {
    cwd: REPO_ROOT,
    timeout: 30_000,
  });
  return JSON.parse(stdout.trim());
}

describe('Function: bundleHandler', () => {
  it('bundles a handler as the stack does and rebuilds it only when a file it includes changes', async () => {
    const helper = await handlerFile('helper.ts', "export const word = 'first';\n");
    const entry = await handlerFile(
      'handler.ts',
      "import { word } from './helper.ts';\nexport const handler = async () => ({ word });\n",
    );
    const bundle = await bundleHandler(entry);
    expect(bundle.startsWith(BUNDLE_DIR)).toBe(true);
    const code = await readFile(bundle, 'utf8');
    expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(await call(bundle)).toEqual({ word: 'first' });

    // Unchanged: the same file, not rewritten.
    const before = await readFile(bundle, 'utf8');
    expect(await bundleHandler(entry)).toBe(bundle);
    expect(await readFile(bundle, 'utf8')).toBe(before);

    // A change to an imported file (a new size, a later mtime) is picked up by a later build.
    await writeFile(helper, "export const word = 'second, longer';\n");
    expect(await call(await bundleHandler(entry))).toEqual({ word: 'second, longer' });
  });

  it('writes the source map beside the bundle, as deployed, and Node applies it with --enable-source-maps', async () => {
    const entry = await handlerFile(
      'thrower.ts',
      "export const handler = async () => {\n  throw new Error('from the handler');\n};\n",
    );
    const bundle = await bundleHandler(entry);
    const code = await readFile(bundle, 'utf8');
    // Not inline (a cold start would decode and compile it with the code): a file that the bundle names.
    expect(code).not.toContain('sourceMappingURL=data:');
    expect(code.trimEnd().endsWith(`//# sourceMappingURL=${basename(bundle)}.map`)).toBe(true);
    const map = JSON.parse(await readFile(`${bundle}.map`, 'utf8')) as { sources: string[] };
    expect(map.sources.some((s) => s.endsWith('thrower.ts'))).toBe(true);
    // No build folder of this process is left behind (other test files may be building theirs).
    expect((await readdir(BUNDLE_DIR)).filter((f) => f.startsWith(`.build-${process.pid}-`))).toEqual([]);

    const script = `import(${JSON.stringify(pathToFileURL(bundle).href)}).then((m) => m.handler()).catch((e) => console.log(e.stack))`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--enable-source-maps', '-e', script], {
      cwd: REPO_ROOT,
      timeout: 30_000,
    });
    expect(stdout).toContain('from the handler');
    expect(stdout).toMatch(/thrower\.ts:2:/);
  });

  it('keeps the browser libraries out of module load (loaded on first use only) and requires the CommonJS SDK', async () => {
    const bundle = await bundleHandler('lambdas/start/handler.ts');
    const code = await readFile(bundle, 'utf8');
    expect(code).not.toMatch(/from\s*["']playwright(-core)?["']/);
    // Required on first use (CommonJS through `require`, not lexed for an ESM import).
    expect(code).not.toMatch(/import\(\s*["']playwright-core["']\s*\)/);
    expect(code).toMatch(/\(\s*["']playwright-core["']\s*\)/);
    // The AWS SDK (CommonJS, outside the bundle) is required too, never imported as ESM.
    expect(code).not.toMatch(/(from|import\()\s*["']@aws-sdk\//);
    expect(code).toMatch(/\(\s*["']@aws-sdk\/client-dynamodb["']\s*\)/);
  });

  it("loads no model SDK when RunStep's module loads: the hosted providers are reached only through a dynamic import", async () => {
    // RunStep's bundle as the stack builds it, with the repository's playbooks (an agent one among them).
    const result = await build({
      entryPoints: [join(REPO_ROOT, 'lambdas/run-step/handler.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      mainFields: ['module', 'main'],
      write: false,
      outfile: join(dir, 'run-step-graph.mjs'),
      metafile: true,
      external: [...PROVIDED_MODULES, ...PLAYWRIGHT_RUNTIME_MODULES],
      alias: bundleAliases(registryModuleForDirs([join(REPO_ROOT, 'playbooks')])),
      nodePaths: [...BUNDLE_NODE_PATHS],
      absWorkingDir: REPO_ROOT,
      logLevel: 'silent',
    });
    const inputs = result.metafile.inputs;
    const isModelSdk = (path: string): boolean => /node_modules\/(ai|@ai-sdk\/[^/]+)\//.test(path);
    expect(Object.keys(inputs).some(isModelSdk)).toBe(true);
    // Every file evaluated at module load: reachable from the entry without a dynamic import.
    const loaded = new Set<string>();
    const queue = ['lambdas/run-step/handler.ts'];
    while (queue.length > 0) {
      const file = queue.pop() as string;
      if (loaded.has(file)) continue;
      loaded.add(file);
      for (const edge of inputs[file]?.imports ?? []) {
        if (edge.kind !== 'dynamic-import' && !edge.external) queue.push(edge.path);
      }
    }
    expect([...loaded].filter(isModelSdk)).toEqual([]);
    expect(loaded.has('lambdas/run-step/run-step.ts')).toBe(true);
  });

  it('fails an invocation of a handler that does not build as Runtime.ImportModuleError, and builds it once fixed', async () => {
    const entry = await handlerFile('broken.ts', 'export const handler = async () => ({ ok: true ');
    const runner = createLambdaRunner({
      mode: 'warm',
      output: 'ignore',
      functions: { broken: { entry, timeoutMs: 5000 } },
    });
    try {
      const opts = { timeoutMs: 10_000, signal: new AbortController().signal };
      await expect(runner.invoke('broken', {}, opts)).rejects.toMatchObject({
        name: 'Runtime.ImportModuleError',
      });
      expect(runner.workers()).toEqual([]);
      await writeFile(entry, 'export const handler = async () => ({ ok: true });\n');
      await expect(runner.invoke('broken', {}, opts)).resolves.toEqual({ ok: true });
    } finally {
      await runner.stop();
    }
  });
});
