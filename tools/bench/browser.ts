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
import { s3ClientFromEnv } from '../../lambdas/lib/aws/s3.ts';
import { createBrowserAdapter } from '../../lambdas/lib/browser/adapter.ts';
import { captureScreenshot } from '../../lambdas/lib/evidence/capture.ts';
import { createS3ScreenshotStore, screenshotName } from '../../lambdas/lib/evidence/store.ts';
import { startAnchorService } from '../../local/anchor/service.ts';
import { waitForExit } from '../../local/chromium.ts';
import { startLocalS3 } from '../../local/s3.ts';
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
  /** A masked JPEG of the page (what RunStep adds to a step that keeps one). */
  screenshotCaptureMs: number[];
  /** Its PutObject to the local S3-compatible server. */
  screenshotStoreMs: number[];
  screenshotBytes: number[];
}

/** A page like a checkout review: text, a table, a form with a password and a card field to mask. */
const SCREENSHOT_PAGE = `data:text/html,${encodeURIComponent(
  `<title>review</title><body style="font:16px sans-serif;margin:2rem"><h1>Review your order</h1>${'<p>Line item with a longer description, quantity and price.</p>'.repeat(12)}<table border="1">${'<tr><td>Mug</td><td>2</td><td>£18.00</td></tr>'.repeat(8)}</table><form><input type="password" value="secret"><input autocomplete="cc-number" value="4242424242424242"><button>Place order</button></form></body>`,
)}`;

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
      verdict: below(fresh, 1000, '< 1 s'),
    },
    f(
      '  fresh process: playwright-core load before it',
      s.libraryLoadMs,
      'paid once per process, at the first attach (or at init in a provisioned environment)',
    ),
    f('  fresh process, spawn to exit', s.freshProcessWallMs, 'Node + tsx start-up, attach, detach, exit'),
    f('reattach, warm process (cached connection)', s.reattachWarmMs),
    ...(s.screenshotCaptureMs.length > 0
      ? [
          f(
            'screenshot: what it adds to a step (capture + store)',
            s.screenshotCaptureMs.map((c, i) => c + (s.screenshotStoreMs[i] ?? 0)),
            'default policy: before approvals and reviews, after writes, on failure (2 per checkout@1 job)',
          ),
          f('  screenshot: masked JPEG capture', s.screenshotCaptureMs),
          f('  screenshot: PutObject (local S3-compatible server)', s.screenshotStoreMs),
          {
            label: '  screenshot: size',
            value: median(s.screenshotBytes) / 1024,
            unit: 'KB',
            statistic: 'median',
            runs: s.screenshotBytes.length,
            verdict: below(median(s.screenshotBytes) / 1024, 200, '<= 200 KB'),
          } satisfies Figure,
        ]
      : []),
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
    screenshotCaptureMs: [],
    screenshotStoreMs: [],
    screenshotBytes: [],
  };
  const s3 = await startLocalS3({ directory: join(dataDir, 's3') });
  const shots = createS3ScreenshotStore(s3ClientFromEnv({ S3_ENDPOINT: s3.endpoint }), s3.bucket);
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
    const { page } = await adapter.attach(sessionId, { allowedDomains: [] });
    await page.goto(SCREENSHOT_PAGE);
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const shot = await captureScreenshot(page);
      const stored = performance.now();
      await shots.put(
        { tenantId: 'bench', jobId: 'bench' },
        screenshotName(i, 'review', 'before-approval'),
        shot.body,
      );
      samples.screenshotCaptureMs.push(stored - t);
      samples.screenshotStoreMs.push(performance.now() - stored);
      samples.screenshotBytes.push(shot.body.byteLength);
    }
    log(`browser: screenshot x${runs}, median ${median(samples.screenshotCaptureMs).toFixed(0)} ms capture`);
    await adapter.detach(sessionId);
  } finally {
    const pids = anchor.browserPids();
    for (const pid of pids) options.pids.add(pid);
    await anchor.stop({ endSessions: true });
    await s3.stop();
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
      'screenshot: captureScreenshot (viewport, masked, JPEG under 200 KB) of a review-like page in the warm session, then PutObject to the local S3-compatible server: what RunStep adds to a step that keeps one.',
    ],
    violations: [],
    durationSeconds: (performance.now() - started) / 1000,
  };
  return { result, samples };
}
