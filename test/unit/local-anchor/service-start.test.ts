import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startAnchorService } from '../../../local/anchor/service.ts';
import { assertChromium } from '../../../local/chromium.ts';
import { ChromiumMissingError } from '../../../local/errors.ts';

describe('Function: startAnchorService (no Chromium)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'belay-anchor-start-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start, naming the fix, and writes nothing', async () => {
    const attempt = startAnchorService({
      port: 0,
      dataDir: join(dir, 'anchor'),
      chromiumPath: join(dir, 'no-chromium'),
    });
    await expect(attempt).rejects.toBeInstanceOf(ChromiumMissingError);
    await expect(attempt).rejects.toThrow(
      /no-chromium.*npm run setup.*apt-get install -y chromium.*CHROMIUM_PATH/,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('starts without it when told it will launch no browser (a real Anchor account)', async () => {
    const service = await startAnchorService({
      port: 0,
      dataDir: join(dir, 'anchor'),
      chromiumPath: join(dir, 'no-chromium'),
      requireChromium: false,
    });
    try {
      expect(service.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await service.stop();
    }
  });

  it('refuses a file that is not executable', () => {
    expect(() => assertChromium(join(process.cwd(), 'package.json'))).toThrow(ChromiumMissingError);
  });

  it('takes an executable binary', () => {
    expect(assertChromium(process.execPath)).toBe(process.execPath);
  });
});
