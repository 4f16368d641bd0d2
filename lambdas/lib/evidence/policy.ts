import type { ScreenshotReason } from '../ledger/types.ts';
import type { ScreenshotPolicy } from '../playbooks/contract.ts';

/** The moments each policy keeps a screenshot at (see `ScreenshotPolicy` in the playbook contract). */
const MOMENTS: Readonly<Record<ScreenshotPolicy, ReadonlySet<ScreenshotReason>>> = {
  default: new Set(['after-write', 'before-approval', 'before-review', 'on-failure']),
  writes: new Set(['after-write']),
  'every-step': new Set(['after-write', 'after-step', 'before-approval', 'before-review', 'on-failure']),
  none: new Set(),
};

/** Does `policy` (default `'default'`) keep a screenshot at this moment? */
export function capturesAt(policy: ScreenshotPolicy | undefined, reason: ScreenshotReason): boolean {
  return MOMENTS[policy ?? 'default'].has(reason);
}

/**
 * Why a screenshot after a verified step would be taken: after a write, before the next
 * step's approval, or after any other step (kept only by `every-step`).
 */
export function reasonAfterStep(kind: 'read' | 'write', nextNeedsApproval: boolean): ScreenshotReason {
  if (kind === 'write') return 'after-write';
  return nextNeedsApproval ? 'before-approval' : 'after-step';
}
