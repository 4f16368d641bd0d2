import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { configureApp } from '../../../cdk/belay-app.ts';
import {
  BelayFunction,
  ESM_REQUIRE_BANNER,
  PLAYWRIGHT_RUNTIME_MODULES,
} from '../../../cdk/constructs/belay-function.ts';
import { ENGINE_FUNCTIONS } from '../../../cdk/engine-functions.ts';
import { REPO_ROOT } from '../../../cdk/paths.ts';
import type { StateMachineFunction } from '../../../lambdas/lib/engine/functions.ts';
import { playbookDirs } from '../../../lambdas/lib/playbooks/discovery/find.ts';
import { registryModuleForDirs } from '../../../lambdas/lib/playbooks/discovery/registry-module.ts';
import { cdkJsonContext, fixture, TestApps } from '../../support/cdk.ts';

const apps = new TestApps();
afterAll(() => apps.cleanup());

/** Bundles a fixture through the construct (real esbuild) and returns the asset dir. */
function bundle(
  runtimeModules?: readonly string[],
  entry = 'browser-handler.ts',
  playbookRegistry?: string,
): string {
  const app = apps.app({}, { bundling: true });
  const stack = new Stack(app, 'BundlingTest');
  new BelayFunction(stack, 'Browser', {
    entry: fixture(entry),
    timeout: Duration.seconds(30),
    runtimeModules,
    ...(playbookRegistry ? { playbookRegistry } : {}),
  });
  const [fn] = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
  const key = fn?.Properties.Code.S3Key as string;
  return join(app.outdir, `asset.${key.replace(/\.zip$/, '')}`);
}

/** Imports the bundle in a fresh Node process, as Lambda would, and calls its handler. */
async function invoke(assetDir: string): Promise<string> {
  const url = pathToFileURL(join(assetDir, 'index.mjs')).href;
  const script = `import(${JSON.stringify(url)}).then((m) => m.handler()).then((r) => console.log(JSON.stringify(r)))`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--enable-source-maps', '-e', script], {
    cwd: assetDir,
    timeout: 30_000,
  });
  return stdout.trim();
}

describe('Construct: BelayFunction bundling (esbuild, no Docker)', () => {
  it('bundles a handler importing playwright-core and anchorbrowser into one ESM file with a source map', async () => {
    const dir = bundle(PLAYWRIGHT_RUNTIME_MODULES);
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
    // playwright-core stays out of the bundle and ships as files, at the locked version.
    expect(statSync(join(dir, 'index.mjs')).size).toBeLessThan(1_000_000);
    const shipped = JSON.parse(readFileSync(join(dir, 'node_modules/playwright-core/package.json'), 'utf8'));
    const locked = JSON.parse(readFileSync('node_modules/playwright-core/package.json', 'utf8'));
    expect(shipped.version).toBe(locked.version);

    expect(JSON.parse(await invoke(dir))).toEqual({ sdk: 'function', connectOverCDP: 'function' });
  });

  // Why PLAYWRIGHT_RUNTIME_MODULES exists. If this starts passing, playwright-core bundles
  // cleanly again and the runtime module can go.
  it('without shipping playwright-core, the bundle fails on import', async () => {
    const dir = bundle();
    expect(existsSync(join(dir, 'node_modules'))).toBe(false);
    await expect(invoke(dir)).rejects.toThrow(/__dirname is not defined|Cannot find module/);
  });
});

describe('Playbook folders in the bundle (cdk synth -c belay:playbooks=<dir>)', () => {
  it('bundles the playbooks of a folder outside the repository beside the repository ones', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'belay-cdk-playbooks-'));
    try {
      cpSync(join(REPO_ROOT, 'test', 'fixtures', 'outside-playbooks'), outside, { recursive: true });
      const registry = registryModuleForDirs(playbookDirs([outside], {}));
      const dir = bundle(PLAYWRIGHT_RUNTIME_MODULES, 'playbooks-handler.ts', registry);
      const { ids, steps } = JSON.parse(await invoke(dir)) as {
        ids: string[];
        steps: Record<string, string[]>;
      };
      expect(ids).toEqual(expect.arrayContaining(['checkout@1', 'expenses@1', 'expense-report@1']));
      expect(steps['expenses@1']).toEqual(['sign-in', 'create-report', 'add-line']);
      expect(steps['expense-report@1']).toEqual(['sign-in', 'create-report']);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  }, 120_000);

  it.each([
    ['two playbooks with one id', ['ok', 'dup'], ['test/fixtures/playbooks/dup/tiny/index.ts']],
    [
      'a module with no default export',
      ['bad-module'],
      ['bad-module/no-export/index.ts', 'has no default export'],
    ],
    ['an invalid declarative file', ['bad-yaml'], ['bad-yaml/broken.playbook.yaml', 'line 24, column 9']],
  ])(
    'fails the synth on %s, naming the file',
    async (_label, dirs, expected) => {
      const value = JSON.stringify(dirs.map((d) => join(REPO_ROOT, 'test', 'fixtures', 'playbooks', d)));
      const outdir = mkdtempSync(join(tmpdir(), 'belay-cdk-bad-'));
      try {
        const failure = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'cdk/app.ts'], {
          cwd: REPO_ROOT,
          timeout: 60_000,
          env: {
            ...process.env,
            CDK_OUTDIR: outdir,
            CDK_CONTEXT_JSON: JSON.stringify({ 'belay:playbooks': value }),
          },
        }).then(
          () => undefined,
          (err: { code?: number; stderr?: string }) => err,
        );
        expect(failure?.code).toBe(1);
        for (const text of expected) expect(failure?.stderr).toContain(text);
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    70_000,
  );
});

describe('Stack: BelayStack bundling (what `cdk synth` does)', () => {
  // The one test that bundles the whole stack: 13 esbuild runs (the notifier, the watchdog and
  // the recovery function among them) and a copy of playwright-core for each function that
  // drives a browser (the API and the engine's browser handlers). Each bundle is loaded as deployed: with tracing off, and with
  // BELAY_TRACING=xray in Lambda, where its init loads Powertools' Tracer (bundled) first.
  it('bundles every function into an ESM file that loads, shipping playwright-core to those that drive a browser', async () => {
    const app = apps.app(cdkJsonContext(), { bundling: true });
    const stack = configureApp(app, {});
    const functions = Template.fromStack(stack).findResources('AWS::Lambda::Function');
    const idOf = (fn: { node: { defaultChild?: unknown } }): string =>
      stack.getLogicalId(fn.node.defaultChild as never);
    const browser = new Set([
      idOf(stack.apiHandler),
      ...Object.entries(stack.engineFunctions)
        .filter(([name]) => ENGINE_FUNCTIONS[name as StateMachineFunction].browser)
        .map(([, fn]) => idOf(fn)),
    ]);
    expect(Object.keys(functions)).toHaveLength(13);
    const dirs: string[] = [];
    for (const [id, fn] of Object.entries(functions)) {
      const dir = join(app.outdir, `asset.${(fn.Properties.Code.S3Key as string).replace(/\.zip$/, '')}`);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(code.startsWith(ESM_REQUIRE_BANNER), id).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map')), id).toBe(true);
      expect(existsSync(join(dir, 'node_modules/playwright-core/package.json')), id).toBe(browser.has(id));
      // Loaded on first use only: no static import of it (or of `playwright`) at the top of any bundle.
      expect(code, id).not.toMatch(/^import[^;]*["']playwright(-core)?["']/m);
      expect(code, id).not.toMatch(/from\s*["']playwright(-core)?["']/);
      dirs.push(dir);
    }
    expect(browser.size).toBe(9);

    // Lambda provides the AWS SDK (left out of the bundles); here the repository's stands in for it.
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(app.outdir, 'node_modules'));
    const urls = dirs.map((dir) => pathToFileURL(join(dir, 'index.mjs')).href);
    const script =
      `const urls = ${JSON.stringify(urls)};` +
      'Promise.all(urls.map((u) => import(u).then((m) => typeof m.handler)))' +
      '.then((types) => console.log(JSON.stringify(types)));';
    for (const tracing of [{}, { BELAY_TRACING: 'xray', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' }]) {
      const { stdout } = await promisify(execFile)(process.execPath, ['--enable-source-maps', '-e', script], {
        cwd: app.outdir,
        timeout: 120_000,
        env: { ...process.env, ...tracing },
      });
      expect(JSON.parse(stdout.trim()), JSON.stringify(tracing)).toEqual(urls.map(() => 'function'));
    }
  }, 600_000);
});
