/**
 * Browser-layer benchmark against the local Anchor service with real Chromium:
 *
 * - create: `openSession` until CDP is ready (each session ended before the next);
 * - reattach, fresh process: a new Node process per run, timed around `attach` alone
 *   (process start-up reported separately);
 * - reattach, warm process: `attach` again in a process that holds the cached connection.
 *
 * Usage: `npx tsx bench/browser.ts [--runs 20] [--json]`. Everything it starts is stopped.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { browserAdapterFromEnv, createBrowserAdapter } from '../lambdas/lib/browser/adapter.ts';
import { startAnchorService } from '../local/anchor/service.ts';
import { waitForExit } from '../local/chromium.ts';

interface Stats {
  runs: number;
  unit: 'ms';
  median: number;
  p95: number;
  min: number;
  max: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  const round = (n: number): number => Math.round(n * 100) / 100;
  return {
    runs: sorted.length,
    unit: 'ms',
    median: round(at(0.5)),
    p95: round(at(0.95)),
    min: round(sorted[0] ?? NaN),
    max: round(sorted.at(-1) ?? NaN),
  };
}

/** Child mode: attach to the session, print the time, detach. */
async function child(sessionId: string): Promise<void> {
  const adapter = browserAdapterFromEnv();
  const started = performance.now();
  const { reused } = await adapter.attach(sessionId, { allowedDomains: [] });
  const attachMs = performance.now() - started;
  await adapter.detach(sessionId);
  console.log(JSON.stringify({ attachMs, reused, uptimeMs: process.uptime() * 1000 }));
}

function runChild(
  sessionId: string,
  env: { apiKey: string; baseUrl: string },
): Promise<{ attachMs: number; wallMs: number }> {
  const started = performance.now();
  return new Promise((ok, fail) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', sessionId],
      {
        env: { ...process.env, ANCHORBROWSER_API_KEY: env.apiKey, ANCHORBROWSER_BASE_URL: env.baseUrl },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) return fail(new Error(`child exited ${code}: ${out}`));
      const parsed = JSON.parse(line) as { attachMs: number; reused: boolean };
      if (parsed.reused) return fail(new Error('a fresh process reported a reused connection'));
      ok({ attachMs: parsed.attachMs, wallMs: performance.now() - started });
    });
  });
}

async function main(runs: number, json: boolean): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-bench-browser-'));
  const anchor = await startAnchorService({ dataDir });
  const env = { apiKey: anchor.apiKey, baseUrl: anchor.baseUrl };
  const adapter = createBrowserAdapter(env);
  const say = (line: string): void => {
    if (!json) console.error(line);
  };
  try {
    const create: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const { sessionId } = await adapter.openSession({ idleTimeoutMinutes: 10, maxDurationMinutes: 30 });
      create.push(performance.now() - started);
      await adapter.endSession(sessionId);
      say(`create ${i + 1}/${runs}: ${create.at(-1)?.toFixed(1)} ms`);
    }

    const { sessionId } = await adapter.openSession({ idleTimeoutMinutes: 10, maxDurationMinutes: 30 });
    const setup = await adapter.attach(sessionId, { allowedDomains: [] });
    await setup.page.goto('data:text/html,<title>bench</title><input id="q" value="kept">');
    await adapter.detach(sessionId);

    const fresh: number[] = [];
    const freshWall: number[] = [];
    for (let i = 0; i < runs; i++) {
      const { attachMs, wallMs } = await runChild(sessionId, env);
      fresh.push(attachMs);
      freshWall.push(wallMs);
      say(`fresh reattach ${i + 1}/${runs}: ${attachMs.toFixed(1)} ms (process ${wallMs.toFixed(0)} ms)`);
    }

    await adapter.attach(sessionId, { allowedDomains: [] });
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const { reused } = await adapter.attach(sessionId, { allowedDomains: [] });
      warm.push(performance.now() - started);
      if (!reused) throw new Error('warm attach did not reuse the cached connection');
    }
    await adapter.detach(sessionId);

    const result = {
      createSession: stats(create),
      reattachFreshProcess: stats(fresh),
      freshProcessWallClock: stats(freshWall),
      reattachWarmProcess: stats(warm),
    };
    if (json) {
      console.log(JSON.stringify(result, null, 2));
    } else {
      const row = (name: string, s: Stats): string =>
        `${name.padEnd(38)} median ${s.median.toFixed(2).padStart(8)} ms   p95 ${s.p95.toFixed(2).padStart(8)} ms   (${s.runs} runs)`;
      console.log(row('create session (CDP ready)', result.createSession));
      console.log(row('reattach, fresh process (attach only)', result.reattachFreshProcess));
      console.log(row('  fresh process, spawn to exit', result.freshProcessWallClock));
      console.log(row('reattach, warm process (cached)', result.reattachWarmProcess));
    }
  } finally {
    const pids = anchor.browserPids();
    await anchor.stop({ endSessions: true });
    for (const pid of pids) await waitForExit(pid, 5_000);
    await rm(dataDir, { recursive: true, force: true });
  }
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('not a positive integer');
  return n;
}

const program = new Command()
  .name('bench/browser')
  .option('--runs <n>', 'runs per measurement (at least 20 recommended)', positive, 20)
  .option('--json', 'print JSON', false)
  .option('--child <sessionId>', 'internal: attach once from this process');
program.parse();
const opts = program.opts<{ runs: number; json: boolean; child?: string }>();
if (opts.child) await child(opts.child);
else await main(opts.runs, opts.json);
