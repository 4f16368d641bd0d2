/**
 * Timers that may run longer than Node's 2^31-1 ms limit (a callback task may wait for a year).
 */

const MAX_DELAY_MS = 2 ** 31 - 1;

/** A cancellable timer. */
export interface LongTimer {
  clear(): void;
}

/** Calls `fn` once after `ms` milliseconds, of any length (chained `setTimeout`s). */
export function setLongTimeout(fn: () => void, ms: number): LongTimer {
  const due = Date.now() + ms;
  let handle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const left = due - Date.now();
    handle = setTimeout(
      () => {
        if (Date.now() >= due) {
          handle = undefined;
          fn();
        } else {
          arm();
        }
      },
      Math.min(Math.max(left, 0), MAX_DELAY_MS),
    );
  };
  arm();
  return {
    clear(): void {
      if (handle) clearTimeout(handle);
      handle = undefined;
    },
  };
}

/** Resolves after pending microtasks have run (one `setImmediate`). */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
