/**
 * The synthesized template the local stack holds its functions to: `cdk synth` of this
 * repository's app, cached by a fingerprint of what goes into it (every file `cdk/app.ts`
 * imports, the state machine definition, `cdk.json` and the lock file), so repeated stacks
 * (test files, restarts) pay the ~15 s synth once per change.
 *
 * The app runs the way the CDK CLI runs it (`cdk.json`'s `app`: the app's entry under tsx,
 * with `CDK_OUTDIR` and `CDK_CONTEXT_JSON`), without the CLI and offline, with bundling
 * skipped (the policies do not depend on the bundles) and path metadata on (as `cdk synth`
 * writes it). local/ never imports cdk/: the app runs in a child process.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { SynthError } from './errors.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const APP_ENTRY = 'cdk/app.ts';
/** Read at synth time, not imported: part of the fingerprint all the same. */
const EXTRA_INPUTS = ['cdk.json', 'package-lock.json', 'statemachine/job.asl.json'];

/** Where synthesized templates are cached (one directory per fingerprint). */
export const SYNTH_CACHE_DIR = join(REPO_ROOT, '.local', 'synth');

/** The files the app is made of: its import graph (esbuild's metafile) and the extra inputs. */
async function appInputs(): Promise<string[]> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, APP_ENTRY)],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
    absWorkingDir: REPO_ROOT,
  });
  return [...Object.keys(result.metafile.inputs), ...EXTRA_INPUTS].sort();
}

/** A hash of the app's inputs' contents: a change to any of them synthesizes anew. */
export async function appFingerprint(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await appInputs()) {
    hash.update(file).update('\0');
    hash.update(await readFile(resolve(REPO_ROOT, file)).catch(() => Buffer.from('(missing)')));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

async function cdkJsonContext(): Promise<Record<string, unknown>> {
  const cdkJson = JSON.parse(await readFile(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return { ...cdkJson.context };
}

function runApp(outdir: string, context: Record<string, unknown>, timeoutMs: number): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', APP_ENTRY], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        CDK_OUTDIR: outdir,
        CDK_CONTEXT_JSON: JSON.stringify(context),
        // Environment-agnostic, as `cdk synth` without credentials.
        CDK_DEFAULT_ACCOUNT: '',
        CDK_DEFAULT_REGION: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const take = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(new SynthError(`cdk synth could not start: ${err.message}`, { cause: err }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) done();
      else fail(new SynthError(`cdk synth failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}

async function templateIn(dir: string): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  const file = (await readdir(dir)).find((f) => f.endsWith('.template.json'));
  return file ? join(dir, file) : undefined;
}

/**
 * The path of this repository's synthesized template: from the cache when the app's inputs
 * are unchanged, else synthesized now (into a temporary directory renamed into place, so
 * concurrent callers never read half a template).
 *
 * @example
 * const file = await synthesizedTemplate({ log: console.log });
 */
export async function synthesizedTemplate(
  options: { cacheDir?: string; log?: (line: string) => void; timeoutMs?: number } = {},
): Promise<string> {
  const cacheDir = options.cacheDir ?? SYNTH_CACHE_DIR;
  const fingerprint = await appFingerprint();
  const dir = join(cacheDir, fingerprint);
  const cached = await templateIn(dir);
  if (cached) return cached;
  options.log?.(`synthesizing the CDK app for its IAM policies (cdk changed; cached in ${dir})`);
  await mkdir(cacheDir, { recursive: true });
  const temp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  try {
    await runApp(
      temp,
      {
        ...(await cdkJsonContext()),
        'aws:cdk:bundling-stacks': [],
        'aws:cdk:enable-path-metadata': true,
      },
      options.timeoutMs ?? 180_000,
    );
    await rename(temp, dir).catch(async (err: NodeJS.ErrnoException) => {
      // Another process synthesized the same inputs first: theirs is as good.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  const file = await templateIn(dir);
  if (!file) throw new SynthError(`cdk synth wrote no template into ${dir}`);
  await pruneCache(cacheDir, dir);
  return file;
}

/** Keeps the few newest synthesized templates (other worktrees' or branches' inputs), removes older ones. */
async function pruneCache(cacheDir: string, keep: string, max = 4): Promise<void> {
  const entries = await readdir(cacheDir, { withFileTypes: true }).catch(() => []);
  const dirs = await Promise.all(
    entries
      .filter((e) => e.isDirectory() && !e.name.endsWith('.tmp'))
      .map(async (e) => ({
        path: join(cacheDir, e.name),
        mtime: (await stat(join(cacheDir, e.name))).mtimeMs,
      })),
  );
  const old = dirs
    .sort((a, b) => b.mtime - a.mtime)
    .slice(max)
    .filter((d) => d.path !== keep);
  await Promise.all(old.map((d) => rm(d.path, { recursive: true, force: true })));
}
