import type { Page } from 'playwright-core';
import type { ScreenshotReason, ScreenshotRef } from '../ledger/types.ts';
import type { Playbook, Step } from '../playbooks/contract.ts';
import { captureScreenshot } from './capture.ts';
import { capturesAt } from './policy.ts';
import { type ScreenshotStore, screenshotName } from './store.ts';

/** What taking a screenshot needs from the engine. */
export interface ScreenshotDeps {
  screenshots: ScreenshotStore;
  log: { warn(message: string, fields?: Record<string, unknown>): void };
}

/** Where in which job the page is. */
export interface ScreenshotAt {
  tenantId: string;
  jobId: string;
  playbook: Playbook;
  step: Step;
  stepIndex: number;
}

/**
 * Captures the page (masked, bounded) and stores it under the job's prefix, if the playbook's
 * policy keeps a screenshot at this moment and a store is configured. Never throws: evidence
 * must not fail a step, so a page that cannot be captured (closed, too large, the store down)
 * is logged and the entry goes without its screenshot.
 *
 * @example
 * const screenshot = await takeScreenshot(deps, page, at, 'after-write');
 * await ledger.completeStep({ ..., ...(screenshot ? { screenshot } : {}) });
 */
export async function takeScreenshot(
  deps: ScreenshotDeps,
  page: Page,
  at: ScreenshotAt,
  reason: ScreenshotReason,
): Promise<ScreenshotRef | undefined> {
  if (!deps.screenshots.enabled || !capturesAt(at.playbook.screenshots, reason)) return undefined;
  try {
    const shot = await captureScreenshot(page, {
      sensitive: [...(at.playbook.sensitive ?? []), ...(at.step.sensitive ?? [])],
      timeoutMs: reason === 'on-failure' ? 2_000 : 5_000,
    });
    const stored = await deps.screenshots.put(
      { tenantId: at.tenantId, jobId: at.jobId },
      screenshotName(at.stepIndex, at.step.id, reason),
      shot.body,
    );
    return {
      ...stored,
      contentType: 'image/jpeg',
      reason,
      masked: shot.masked,
      width: shot.width,
      height: shot.height,
    };
  } catch (err) {
    deps.log.warn('screenshot not kept', {
      jobId: at.jobId,
      step: at.step.id,
      reason,
      error: err instanceof Error ? err.name : 'unknown',
    });
    return undefined;
  }
}
