/**
 * The getting-started page's commands, run as a newcomer runs them: every `bash example` block of
 * `docs/getting-started/` in a shell, line by line, against a fresh local stack started here (free
 * loopback ports, a temporary data directory). The shell works in a mirror of the repository
 * whose `.local` is that stack's data directory, so `npx belay` and `.local/demo-api-key` find it
 * as they find `npm start`'s; the documented API address (127.0.0.1:3000) is rewritten to the
 * stack's, and `belay login` saves into the mirror (XDG_CONFIG_HOME). A line ends with `# exit N` when N is the exit status it must have (else 0). Bounded:
 * the whole run has a deadline, and the shell's process group is ended by its PID.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../../local/ports.ts';
import { type LocalStack, startLocalStack } from '../../../local/stack.ts';
import { codeBlocks, isExample } from '../../../tools/docs/examples.ts';

const root = join(import.meta.dirname, '../../..');
const DEADLINE_MS = 8 * 60_000;

/** The example lines of the getting-started pages, with the exit status each must have. */
async function exampleLines(): Promise<Array<{ where: string; command: string; exit: number }>> {
  const dir = join(root, 'docs/getting-started');
  const out: Array<{ where: string; command: string; exit: number }> = [];
  for (const f of (await readdir(dir)).filter((f) => f.endsWith('.md')).sort()) {
    const blocks = codeBlocks(await readFile(join(dir, f), 'utf8'), `getting-started/${f}`);
    for (const b of blocks.filter((x) => isExample(x) && x.lang === 'bash'))
      b.code.split('\n').forEach((line, i) => {
        if (!line.trim() || line.trim().startsWith('#')) return;
        const exit = /#\s*exit (\d+)/.exec(line)?.[1];
        out.push({ where: `${b.file}:${b.line + 1 + i}`, command: line, exit: exit ? Number(exit) : 0 });
      });
  }
  return out;
}

/** One bash script: each line, then a check of its exit status (the shell keeps its variables). */
function script(
  lines: ReadonlyArray<{ where: string; command: string; exit: number }>,
  apiUrl: string,
): string {
  const host = new URL(apiUrl).host;
  return lines
    .map(({ where, command, exit }) =>
      [
        `echo "+ ${where}"`,
        command.replaceAll('127.0.0.1:3000', host),
        `rc=$?; if [ "$rc" -ne ${exit} ]; then echo "${where}: exit $rc, expected ${exit}" >&2; exit 1; fi`,
      ].join('\n'),
    )
    .join('\n');
}

/** The environment without a Belay address of its own, so `belay` finds the stack as a newcomer's does. */
function withoutBelayTarget(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { BELAY_URL: _url, BELAY_KEY: _key, BELAY_LOCAL_STATE: _state, ...rest } = env;
  return rest;
}

let stack: LocalStack | undefined;
let work: string;
let dataDir: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'belay-docs-getting-started-'));
  dataDir = join(work, '.local');
  // A mirror of the repository: every top-level entry linked, `.local` the fresh stack's own.
  for (const entry of await readdir(root))
    if (entry !== '.local' && entry !== '.git') await symlink(join(root, entry), join(work, entry));
  const [shop, crm, billing] = (await freePorts(3)) as [number, number, number];
  stack = await startLocalStack({
    dataDir,
    fresh: true,
    resume: false,
    apiPort: 0,
    ports: { anchor: 0, shop, crm, billing, dynamodb: 0, sfn: 0 },
    lambdaMode: 'warm',
    env: { LOG_LEVEL: 'error' },
  });
}, 240_000);
afterAll(async () => {
  await stack?.stop({ endSessions: true });
  await rm(work, { recursive: true, force: true });
}, 120_000);

describe('Docs: getting started', () => {
  it(
    'runs every example command of the getting-started pages against a fresh local stack',
    async () => {
      const lines = await exampleLines();
      expect(lines.length).toBeGreaterThan(3);
      const child = spawn('bash', ['-c', script(lines, stack?.apiUrl as string)], {
        cwd: work,
        detached: true,
        // `belay login` saves its credentials under XDG_CONFIG_HOME: the mirror's, not this user's.
        env: { ...withoutBelayTarget(process.env), XDG_CONFIG_HOME: join(work, '.config') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
      });
      child.stderr.on('data', (d) => {
        output += d;
      });
      const timer = setTimeout(() => {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      }, DEADLINE_MS);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(timer);
      expect(code, output.slice(-4000)).toBe(0);
      expect(output).toContain('SUCCEEDED');
    },
    DEADLINE_MS + 60_000,
  );
});
