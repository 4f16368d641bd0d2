/**
 * Section `browser` (moved from `bench/browser.ts`): the browser layer against its own local
 * Anchor-compatible service with real Chromium:
 *
 * - create: `openSession` until CDP is ready (each session ended before the next);
 * - reattach, fresh process: a new Node process per run (`reattach-child.ts`), timed around
 *   `attach` alone (the process's spawn-to-exit time reported apart);
 * - reattach, warm process: `attach` again in a process that holds the cached connection.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBrowserAdapter } from '../../lambdas/lib/browser/adapter.ts';
import { startAnchorService } from '../../local/anchor/service.ts';
import { waitForExit } from '../../local/chromium.ts';
import { below, type Figure, median } from './figures.ts';
import { loadAverage, type SectionResult } from './report.ts';

const CHILD = fileURLToPath(new URL('./reattach-child.ts', import.meta.url));

/** Raw samples, ms. */
export interface BrowserSamples {
  createMs: number[];
  reattachFreshMs: number[];
  /** playwright-core's load in the same fresh process, before the attach. */
  libraryLoadMs: number[];
  freshProcessWallMs: number[];
  reattachWarmMs: number[];
}

/** Figures of the section (pure). */
export function browserFigures(s: BrowserSamples): Figure[] {
  const f = (label: string, samples: number[], note?: string): Figure => ({
    label,
    value: median(samples),
    unit: 'ms',
    statistic: 'median',
    runs: samples.length,
    ...(note ? { note } : {}),
  });
  const fresh = median(s.reattachFreshMs);
  return [
    f('create session (Chromium launched, CDP ready)', s.createMs),
    {
      ...f('reattach, fresh process (attach only)', s.reattachFreshMs),
      verdict: below(fresh, 1000, '< 1 s (issue 3)'),
    },
    f(
      '  fresh process: playwright-core load before it',
      s.libraryLoadMs,
      'paid once per process, at the first attach (or at init in a provisioned environment)',
    ),
    f('  fresh process, spawn to exit', s.freshProcessWallMs, 'Node + tsx start-up, attach, detach, exit'),
    f('reattach, warm process (cached connection)', s.reattachWarmMs),
  ];
}

function runChild(
  sessionId: string,
  env: { apiKey: string; baseUrl: string },
): Promise<{ attachMs: number; libraryMs: number; wallMs: number }> {
  const started = performance.now();
  return new Promise((ok, fail) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, sessionId], {
      env: { ...process.env, ANCHORBROWSER_API_KEY: env.apiKey, ANCHORBROWSER_BASE_URL: env.baseUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.once('error', fail);
    proc.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) return fail(new Error(`reattach child exited ${code}: ${out}`));
      const parsed = JSON.parse(line) as { attachMs: number; libraryMs: number; reused: boolean };
      if (parsed.reused) return fail(new Error('a fresh process reported a reused connection'));
      ok({ attachMs: parsed.attachMs, libraryMs: parsed.libraryMs, wallMs: performance.now() - started });
    });
  });
}

/** Measures the section; every Chromium it starts is gone when it returns. */
export async function runBrowser(options: {
  runs: number;
  log: (line: string) => void;
  pids: Set<number>;
}): Promise<{ result: SectionResult; samples: BrowserSamples }> {
  const { runs, log } = options;
  const started = performance.now();
  const load = loadAverage();
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-bench-browser-'));
  const anchor = await startAnchorService({ dataDir });
  const env = { apiKey: anchor.apiKey, baseUrl: anchor.baseUrl };
  const adapter = createBrowserAdapter(env);
  const samples: BrowserSamples = {
    createMs: [],
    reattachFreshMs: [],
    libraryLoadMs: [],
    freshProcessWallMs: [],
    reattachWarmMs: [],
  };
  try {
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const { sessionId } = await adapter.openSession({ idleTimeoutMinutes: 10, maxDurationMinutes: 30 });
      samples.createMs.push(performance.now() - t);
      await adapter.endSession(sessionId);
    }
    log(`browser: create session x${runs}, median ${median(samples.createMs).toFixed(0)} ms`);

    const { sessionId } = await adapter.openSession({ idleTimeoutMinutes: 10, maxDurationMinutes: 30 });
    const setup = await adapter.attach(sessionId, { allowedDomains: [] });
    await setup.page.goto('data:text/html,<title>bench</title><input id="q" value="kept">');
    await adapter.detach(sessionId);
    for (let i = 0; i < runs; i++) {
      const { attachMs, libraryMs, wallMs } = await runChild(sessionId, env);
      samples.reattachFreshMs.push(attachMs);
      samples.libraryLoadMs.push(libraryMs);
      samples.freshProcessWallMs.push(wallMs);
    }
    log(`browser: fresh-process reattach x${runs}, median ${median(samples.reattachFreshMs).toFixed(0)} ms`);

    await adapter.attach(sessionId, { allowedDomains: [] });
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const { reused } = await adapter.attach(sessionId, { allowedDomains: [] });
      samples.reattachWarmMs.push(performance.now() - t);
      if (!reused) throw new Error('warm attach did not reuse the cached connection');
    }
    await adapter.detach(sessionId);
  } finally {
    const pids = anchor.browserPids();
    for (const pid of pids) options.pids.add(pid);
    await anchor.stop({ endSessions: true });
    for (const pid of pids) await waitForExit(pid, 5_000);
    await rm(dataDir, { recursive: true, force: true });
  }
  const result: SectionResult = {
    section: 'browser',
    title: 'Browser layer: local Anchor-compatible service, real Chromium',
    loadAverage: { start: load, end: loadAverage() },
    figures: browserFigures(samples),
    notes: [
      'create: openSession until CDP is ready, each session ended before the next.',
      'fresh reattach: a new Node process per run loads playwright-core (timed apart), then attaches to one live session over CDP (connectOverCDP, default context, existing page), timed around attach alone.',
      'warm reattach: attach again in a process that holds the cached connection (what a warm Lambda pays).',
    ],
    violations: [],
    durationSeconds: (performance.now() - started) / 1000,
  };
  return { result, samples };
}
