import type { Page } from 'playwright-core';
import type { Evidence } from '../ledger/types.ts';
import { PRE_ACTION_CHECK_MS, type Step, type StepContext } from '../playbooks/contract.ts';

/**
 * A write's verify, read-only, on the page just before its action: the evidence that already
 * held (an earlier record, a value already set), or null. The step's `check` (the verify with
 * no waiting) when it has one, else its `verify`; either counts as not holding when it takes
 * longer than {@link PRE_ACTION_CHECK_MS} (a verify that waits for a confirmation that is not
 * there yet) or throws. Never throws: a page it cannot read held nothing.
 */
export async function evidenceBeforeAction(
  step: Step,
  page: Page,
  ctx: StepContext,
): Promise<Evidence | null> {
  const read = step.check ? step.check(page, ctx) : step.verify(page, ctx);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), PRE_ACTION_CHECK_MS);
  });
  try {
    return await Promise.race([read.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}
