import { BelayError } from '../errors.ts';

/** Errors of the screenshot store and capture. None is retryable: a screenshot is never worth a retry of the step. */

/** No screenshot with this key for this tenant and job: missing, or under another tenant's prefix (the same answer). */
export class ScreenshotNotFoundError extends BelayError {
  constructor(options?: ErrorOptions) {
    super('ScreenshotNotFoundError', 'screenshot-not-found', 'no such screenshot', options);
  }
}

/** The page could not be captured under the size bound, even at the lowest quality and clipped. */
export class ScreenshotTooLargeError extends BelayError {
  readonly bytes: number;
  constructor(bytes: number, maxBytes: number) {
    super(
      'ScreenshotTooLargeError',
      'screenshot-too-large',
      `the page's screenshot is ${bytes} bytes at the lowest quality, over the ${maxBytes}-byte bound`,
    );
    this.bytes = bytes;
  }
}

/** Screenshots are switched off in this function (no bucket configured): a read or write is a bug. */
export class ScreenshotsDisabledError extends BelayError {
  constructor() {
    super(
      'ScreenshotsDisabledError',
      'misconfigured',
      'no screenshot store: BELAY_SCREENSHOT_BUCKET is not set',
    );
  }
}
