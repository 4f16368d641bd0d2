/**
 * `npm run docs:screenshots`: the getting-started pages' pictures, taken from the real console.
 * Starts a private local stack (free loopback ports, a temporary data directory), submits the demo
 * job through the API, photographs the jobs list and the inbox while the job waits for its
 * approval, approves it in the inbox as a person would, and photographs the job's page once it
 * succeeded. The PNGs go to `docs/public/screenshots/` and are committed, so the site builds
 * without a stack. Run it through the machine's heavy-test lock:
 * `flock /tmp/belay-heavy.lock npm run docs:screenshots`.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { DEFAULT_CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../local/chromium.ts';
import { freePorts } from '../../local/ports.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { createClient } from '../cli/belay/client.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = join(root, 'docs/public/screenshots');
const JOB_ID = 'demo-checkout-1';
const VIEWPORT = { width: 1280, height: 800 };

/** Polls `check` every 500 ms until it is truthy, for at most `ms`. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(out, `${name}.png`), fullPage: false });
  console.log(`  wrote docs/public/screenshots/${name}.png`);
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'belay-docs-screenshots-'));
  const [shop, crm, billing] = (await freePorts(3)) as [number, number, number];
  let stack: LocalStack | undefined;
  const browser = await chromium.launch({
    executablePath: DEFAULT_CHROMIUM_PATH,
    args: [...QUIET_CHROMIUM_FLAGS],
  });
  try {
    console.log(`starting the local stack (data in ${dataDir})`);
    stack = await startLocalStack({
      dataDir,
      fresh: true,
      resume: false,
      apiPort: 0,
      ports: { anchor: 0, shop, crm, billing, dynamodb: 0, sfn: 0 },
      lambdaMode: 'warm',
      env: { LOG_LEVEL: 'error' },
    });
    const apiUrl = stack.apiUrl as string;
    const api = createClient(apiUrl, stack.demoApiKey);
    const job = JSON.parse(await readFile(join(root, 'demo/jobs/checkout.json'), 'utf8')) as unknown;
    await api.request('POST', '/jobs', job);
    console.log(`submitted ${JOB_ID}; waiting for its approval`);
    let last = '';
    await until('the approval', 300_000, async () => {
      const { job: j } = await api.request<{ job: { status?: string; failure?: unknown } }>(
        'GET',
        `/jobs/${JOB_ID}`,
      );
      if (j.status !== last) console.log(`  ${JOB_ID}: ${j.status}`);
      last = j.status ?? '';
      if (j.status === 'FAILED') throw new Error(`the demo job failed: ${JSON.stringify(j.failure)}`);
      return j.status === 'WAITING_APPROVAL' ? j : undefined;
    });

    await mkdir(out, { recursive: true });
    const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(`${apiUrl}/console`);
    await page.getByLabel('API key').fill(stack.demoApiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/inbox$/);
    await page.waitForLoadState('networkidle');
    await shoot(page, 'inbox');
    await page.goto(`${apiUrl}/console/jobs`);
    await page.waitForLoadState('networkidle');
    await shoot(page, 'jobs');

    await page.goto(`${apiUrl}/console/inbox`);
    await page
      .getByRole('button', { name: /approve/i })
      .first()
      .click();
    console.log('approved in the inbox; waiting for the job to succeed');
    await until('SUCCEEDED', 300_000, async () => {
      const { job: j } = await api.request<{ job: { status?: string } }>('GET', `/jobs/${JOB_ID}`);
      if (j.status === 'FAILED' || j.status === 'CANCELLED')
        throw new Error(`the demo job ended ${j.status}`);
      return j.status === 'SUCCEEDED' ? j : undefined;
    });
    await page.goto(`${apiUrl}/console/jobs/${JOB_ID}`);
    await page.waitForLoadState('networkidle');
    await shoot(page, 'job');
    await context.close();
  } finally {
    await browser.close();
    await stack?.stop({ endSessions: true });
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
