/**
 * A browser service that died while launching a Chromium (the browser up, its session record
 * not yet written) leaves a browser no session owns. The next instance on the same data
 * directory ends it, and leaves the browsers of sessions it adopts alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anchorbrowser from 'anchorbrowser';
import { afterAll, describe, expect, it } from 'vitest';
import { type AnchorService, startAnchorService } from '../../../local/anchor/service.ts';
import { killProcessGroup, launchChromium, waitForExit } from '../../../local/chromium.ts';
import { isRunning } from '../../../local/processes.ts';

const API_KEY = 'test-key-orphans-0123';
const started: number[] = [];
let dataDir = '';
let second: AnchorService | undefined;

afterAll(async () => {
  await second?.stop({ endSessions: true });
  for (const pid of started) killProcessGroup(pid);
  if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
});

describe('Local Anchor service: a Chromium launched but never recorded', () => {
  it('is ended by the next instance, which adopts the recorded session as before', {
    timeout: 60_000,
  }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'belay-orphans-'));
    const first = await startAnchorService({ dataDir, apiKey: API_KEY });
    const recorded = await new Anchorbrowser({ apiKey: API_KEY, baseURL: first.baseUrl }).sessions.create({});
    const recordedId = recorded.data?.id as string;
    const [recordedPid] = first.browserPids();
    await first.stop(); // browsers live on: the next instance adopts them
    // As if the service had died mid-launch: a Chromium in its browsers directory, no record.
    const orphan = await launchChromium({ userDataDir: join(dataDir, 'browsers', 'never-recorded') });
    started.push(orphan.pid, recordedPid as number);
    expect(isRunning(orphan.pid)).toBe(true);

    second = await startAnchorService({ dataDir, apiKey: API_KEY });
    expect(await waitForExit(orphan.pid, 10_000)).toBe(true);
    expect(isRunning(recordedPid as number)).toBe(true);
    expect(second.session(recordedId)?.status).toBe('running');
    expect(second.browserPids()).toEqual([recordedPid]);
  });
});
