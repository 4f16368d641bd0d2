import type { Page } from 'playwright-core';
import { ScreenshotTooLargeError } from './errors.ts';

/**
 * Elements every screenshot masks, whatever the playbook says: password fields, card fields
 * (the HTML autofill tokens `cc-*` and the usual names) and one-time-code fields. A playbook
 * adds its own with `sensitive` (on the playbook or on a step). Masking covers the element's
 * box with a solid {@link MASK_COLOR} before the pixels are taken (Playwright's `mask`), so
 * neither typed nor autofilled values reach the image.
 */
export const DEFAULT_MASK_SELECTORS: readonly string[] = Object.freeze([
  'input[type="password" i]',
  'input[autocomplete*="password" i]',
  'input[name*="password" i]',
  'input[autocomplete^="cc-" i]',
  'input[name*="card" i]',
  'input[name*="cvc" i]',
  'input[name*="cvv" i]',
  'input[name*="pan" i]',
  'input[autocomplete="one-time-code" i]',
  'input[name*="otp" i]',
  'input[name="code" i]',
  '[data-belay-sensitive]',
]);

/** The colour of a masked box (Playwright's default magenta: easy to see, and to test for). */
export const MASK_COLOR = '#FF00FF';

/** Largest JPEG kept; beyond it the quality steps down, then the capture is clipped. */
export const MAX_SCREENSHOT_BYTES = 200 * 1024;

const QUALITIES = [70, 50, 35, 20] as const;
/** The last resort: the top-left of the page at this size (CSS pixels). */
const CLIP = { width: 1280, height: 800 } as const;

export interface CaptureOptions {
  /** Selectors masked besides {@link DEFAULT_MASK_SELECTORS}. */
  sensitive?: readonly string[];
  maxBytes?: number;
  /** Each capture attempt's timeout. */
  timeoutMs?: number;
}

export interface Capture {
  body: Buffer;
  /** Elements masked. */
  masked: number;
  width: number;
  height: number;
}

/**
 * A masked JPEG of the page's viewport under `maxBytes`: quality steps down from 70 to 20,
 * then the top-left 1280x800 is kept. Throws `ScreenshotTooLargeError` if even that is over.
 *
 * @example
 * const shot = await captureScreenshot(page, { sensitive: ['.iban'] });
 * shot.body.byteLength <= MAX_SCREENSHOT_BYTES; // true
 */
export async function captureScreenshot(page: Page, options: CaptureOptions = {}): Promise<Capture> {
  const maxBytes = options.maxBytes ?? MAX_SCREENSHOT_BYTES;
  const selectors = [...DEFAULT_MASK_SELECTORS, ...(options.sensitive ?? [])];
  const mask = page.locator(selectors.join(', '));
  const masked = await mask.count();
  const base = {
    type: 'jpeg' as const,
    mask: [mask],
    maskColor: MASK_COLOR,
    animations: 'disabled' as const,
    caret: 'hide' as const,
    scale: 'css' as const,
    timeout: options.timeoutMs ?? 5_000,
  };
  let body: Buffer | undefined;
  for (const quality of QUALITIES) {
    body = await page.screenshot({ ...base, quality });
    if (body.byteLength <= maxBytes) return { body, masked, ...jpegSize(body) };
  }
  body = await page.screenshot({ ...base, quality: 40, clip: { x: 0, y: 0, ...CLIP } });
  if (body.byteLength <= maxBytes) return { body, masked, ...jpegSize(body) };
  throw new ScreenshotTooLargeError(body.byteLength, maxBytes);
}

/** Width and height from a JPEG's start-of-frame marker (0 x 0 if there is none). */
export function jpegSize(jpeg: Buffer): { width: number; height: number } {
  let i = 2;
  while (i + 9 < jpeg.length) {
    if (jpeg[i] !== 0xff) return { width: 0, height: 0 };
    const marker = jpeg[i + 1] as number;
    const length = jpeg.readUInt16BE(i + 2);
    // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: jpeg.readUInt16BE(i + 5), width: jpeg.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return { width: 0, height: 0 };
}
