import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedSites, startSites } from '../../../demo/sites/index.ts';
import { s3ClientFromEnv } from '../../../lambdas/lib/aws/s3.ts';
import { captureScreenshot, MAX_SCREENSHOT_BYTES } from '../../../lambdas/lib/evidence/capture.ts';
import {
  createS3ScreenshotStore,
  type ScreenshotStore,
  screenshotName,
} from '../../../lambdas/lib/evidence/store.ts';
import { type LocalS3, startLocalS3 } from '../../../local/s3.ts';
import { launchBrowser } from '../console/support.ts';

/**
 * No screenshot shows a password, a card number or a one-time code: known values are typed into
 * the demo shop's real sign-in and code pages and a card form, the page is captured and stored
 * in the local S3-compatible server as RunStep does, and the stored JPEG, decoded in Chromium,
 * is the mask colour over each of those fields, where an unmasked capture of the same page is not.
 */
let browser: Browser;
let sites: StartedSites;
let s3: LocalS3;
let store: ScreenshotStore;
let dir: string;
const REF = { tenantId: 'mask-tenant', jobId: 'mask-job' };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belay-mask-'));
  sites = await startSites({ dataDir: join(dir, 'sites') });
  s3 = await startLocalS3({ directory: join(dir, 's3') });
  store = createS3ScreenshotStore(
    s3ClientFromEnv({ S3_ENDPOINT: s3.endpoint, AWS_REGION: 'us-east-1' }),
    s3.bucket,
  );
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s3?.stop();
  await sites?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Share of the box's pixels (inset by 3 px) within JPEG noise of magenta, decoded from `jpeg` in the browser. */
async function maskedShare(
  page: Page,
  jpeg: Buffer,
  box: { x: number; y: number; width: number; height: number },
): Promise<number> {
  const decoder = await browser.newPage();
  try {
    return await decoder.evaluate(
      async ({ b64, box }) => {
        const img = new Image();
        img.src = `data:image/jpeg;base64,${b64}`;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.naturalWidth;
        canvas.height = img.naturalHeight;
        const g = canvas.getContext('2d') as CanvasRenderingContext2D;
        g.drawImage(img, 0, 0);
        const x = Math.round(box.x + 3);
        const y = Math.round(box.y + 3);
        const data = g.getImageData(
          x,
          y,
          Math.max(1, Math.round(box.width - 6)),
          Math.max(1, Math.round(box.height - 6)),
        ).data;
        let near = 0;
        for (let i = 0; i < data.length; i += 4) {
          const [r, gr, b] = [data[i] as number, data[i + 1] as number, data[i + 2] as number];
          if (r > 200 && gr < 60 && b > 200) near++;
        }
        return near / (data.length / 4);
      },
      { b64: jpeg.toString('base64'), box },
    );
  } finally {
    await decoder.close();
    void page;
  }
}

async function storedCapture(page: Page, sensitive: string[] = []): Promise<Buffer> {
  const shot = await captureScreenshot(page, { sensitive });
  const { key } = await store.put(REF, screenshotName(0, 'mask', 'after-step'), shot.body);
  const stored = await store.get(REF, key);
  expect(stored.equals(shot.body)).toBe(true);
  expect(stored.byteLength).toBeLessThanOrEqual(MAX_SCREENSHOT_BYTES);
  return stored;
}

/** Each field holds its typed value, is masked in the stored screenshot, and is not masked in a plain capture. */
async function expectMasked(
  page: Page,
  fields: { selector: string; value: string }[],
  sensitive: string[] = [],
): Promise<void> {
  for (const f of fields) {
    await page.locator(f.selector).fill(f.value);
    expect(
      await page
        .locator(f.selector)
        .inputValue()
        .catch(() => page.locator(f.selector).textContent()),
    ).toBe(f.value);
  }
  const masked = await storedCapture(page, sensitive);
  const plain = await page.screenshot({ type: 'jpeg', quality: 70, scale: 'css' });
  for (const f of fields) {
    const box = await page.locator(f.selector).boundingBox();
    expect(box, f.selector).not.toBeNull();
    expect(
      await maskedShare(page, masked, box as NonNullable<typeof box>),
      `${f.selector} masked`,
    ).toBeGreaterThan(0.95);
    expect(
      await maskedShare(page, plain, box as NonNullable<typeof box>),
      `${f.selector} unmasked`,
    ).toBeLessThan(0.05);
  }
}

describe('Screenshots mask what must not be seen', () => {
  it('the password on the shop sign-in page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${sites.shop.baseUrl}/signin`);
    await expectMasked(page, [{ selector: 'input[name="password"]', value: 'Hunter2-Very-Secret!' }]);
    await page.close();
  });

  it('the one-time code on the shop code page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${sites.shop.baseUrl}/signin`);
    await page.locator('input[name="username"]').fill('alan@example.com');
    await page.locator('input[name="password"]').fill('demo-shop-alan');
    await Promise.all([
      page.waitForURL(/\/signin\/code/),
      page.locator('form[data-form="signin"] button[type="submit"]').click(),
    ]);
    await expectMasked(page, [{ selector: 'input[name="code"]', value: '482913' }]);
    await page.close();
  });

  it('a full card number, its security code, and what a playbook marks sensitive', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.setContent(`<!doctype html><form style="font: 20px sans-serif; padding: 20px">
      <label>Card number <input name="cardNumber" autocomplete="cc-number" size="24"></label><br><br>
      <label>Security code <input name="cvc" autocomplete="cc-csc" size="6"></label><br><br>
      <label>IBAN <input id="iban" name="iban" size="30"></label><br><br>
      <label>Reference <input id="ref" name="ref" size="30" data-belay-sensitive></label>
    </form>`);
    await expectMasked(
      page,
      [
        { selector: 'input[name="cardNumber"]', value: '4242 4242 4242 4242' },
        { selector: 'input[name="cvc"]', value: '737' },
        { selector: '#iban', value: 'GB33BUKB20201555555555' },
        { selector: '#ref', value: 'REF-TOP-SECRET' },
      ],
      ['#iban'],
    );
    await page.close();
  });
});
