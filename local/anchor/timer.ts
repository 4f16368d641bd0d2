/** Timers for session timeouts, which may exceed `setTimeout`'s 24.8-day limit. */

const MAX_DELAY = 2_147_483_647;

/** A cancellable, unref'd timer of any length. */
export interface LongTimer {
  cancel(): void;
}

/** Run `fn` once after `delayMs` (immediately, on the next tick, when not positive). */
export function longTimeout(fn: () => void, delayMs: number): LongTimer {
  let handle: NodeJS.Timeout | undefined;
  let cancelled = false;
  const due = Date.now() + Math.max(0, delayMs);
  const arm = (): void => {
    const left = due - Date.now();
    handle = setTimeout(
      () => {
        if (cancelled) return;
        if (due - Date.now() > 0) arm();
        else fn();
      },
      Math.min(Math.max(0, left), MAX_DELAY),
    );
    handle.unref();
  };
  arm();
  return {
    cancel(): void {
      cancelled = true;
      if (handle) clearTimeout(handle);
    },
  };
}
