/**
 * The Node that Lambda's `nodejs22.x` runtime runs, for local workers that start as deployed
 * functions start, and for building a bundle's compile cache with the Node that will read it.
 * This project itself runs on Node 20; the npm package `node-linux-<arch>` carries Node's
 * official Linux binary in its tarball (`package/bin/node`). It is fetched once with the npm
 * client (`npm pack`), checked against the integrity pinned here, and unpacked into
 * `.local/lambda-node/` (ignored by git), where later runs find it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LambdaNodeUnavailableError } from './errors.ts';
import { REPO_ROOT } from './worker-process.ts';

const run = promisify(execFile);

/** The Node version the local workers run as Lambda's `nodejs22.x`. */
export const LAMBDA_NODE_VERSION = '22.23.5';

/**
 * The npm registry's integrity of `node-linux-<arch>@22.23.5`, pinned as a lockfile would: a
 * tarball that differs is refused.
 */
const INTEGRITY: Readonly<Record<string, string>> = Object.freeze({
  x64: 'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==',
  arm64: 'sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+TQby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg==',
});

/** Where fetched binaries are kept. */
export const LAMBDA_NODE_DIR = join(REPO_ROOT, '.local', 'lambda-node');

/** A Node binary that local workers can run as Lambda's runtime. */
export interface LambdaNode {
  /** e.g. `22.23.5`. */
  version: string;
  /** Absolute path of the `node` binary. */
  execPath: string;
}

const ready = new Map<string, Promise<LambdaNode>>();

/**
 * Lambda's Node for this machine, fetched on first use (about 50 MB through the npm registry).
 * Callers at the same time share one fetch; processes at the same time each unpack into a
 * folder of their own and move it into place, so a reader never sees half a binary.
 *
 * @throws LambdaNodeUnavailableError off Linux, on an architecture without a pinned package,
 * or when the package cannot be fetched, differs from its pinned integrity, or does not run
 *
 * @example
 * const node = await ensureLambdaNode();
 * // { version: '22.23.5', execPath: '<repo>/.local/lambda-node/node-v22.23.5-linux-x64/bin/node' }
 */
export function ensureLambdaNode(
  options: { version?: string; log?: (line: string) => void } = {},
): Promise<LambdaNode> {
  const version = options.version ?? LAMBDA_NODE_VERSION;
  let pending = ready.get(version);
  if (!pending) {
    pending = fetchLambdaNode(version, options.log ?? (() => undefined));
    ready.set(version, pending);
    pending.catch(() => ready.delete(version));
  }
  return pending;
}

async function fetchLambdaNode(version: string, log: (line: string) => void): Promise<LambdaNode> {
  const { platform, arch } = process;
  if (platform !== 'linux')
    throw new LambdaNodeUnavailableError(version, `Lambda runs Linux; this machine runs ${platform}`);
  const integrity = version === LAMBDA_NODE_VERSION ? INTEGRITY[arch] : undefined;
  if (!integrity)
    throw new LambdaNodeUnavailableError(version, `no pinned node-linux-${arch}@${version} package`);
  const target = join(LAMBDA_NODE_DIR, `node-v${version}-linux-${arch}`);
  const execPath = join(target, 'bin', 'node');
  if (!(await executable(execPath))) {
    log(`fetching Lambda's Node ${version} (npm package node-linux-${arch}) into ${LAMBDA_NODE_DIR}`);
    await mkdir(LAMBDA_NODE_DIR, { recursive: true });
    const work = await mkdtemp(join(LAMBDA_NODE_DIR, '.fetch-'));
    try {
      const tarball = await pack(`node-linux-${arch}@${version}`, work, version);
      const actual = await sha512(tarball);
      if (actual !== integrity)
        throw new LambdaNodeUnavailableError(
          version,
          `the package's integrity ${actual} is not the pinned one`,
        );
      await run('tar', ['-xzf', tarball, '-C', work, 'package/bin/node']);
      await rename(join(work, 'package'), target).catch(async (err: NodeJS.ErrnoException) => {
        // Another process moved its copy into place first: that one is as good.
        if (!(await executable(execPath))) throw err;
      });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  const { stdout } = await run(execPath, ['--version']).catch((err: Error) => {
    throw new LambdaNodeUnavailableError(version, `${execPath} does not run`, { cause: err });
  });
  if (stdout.trim() !== `v${version}`)
    throw new LambdaNodeUnavailableError(version, `${execPath} is ${stdout.trim()}`);
  return { version, execPath };
}

/** `npm pack <spec>` into `dir`: the tarball's path. */
async function pack(spec: string, dir: string, version: string): Promise<string> {
  try {
    const { stdout } = await run('npm', ['pack', spec, '--pack-destination', dir, '--json'], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    if (!packed) throw new Error('npm pack named no file');
    return join(dir, packed.filename);
  } catch (err) {
    throw new LambdaNodeUnavailableError(version, `npm pack ${spec} failed`, { cause: err });
  }
}

async function sha512(file: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}
