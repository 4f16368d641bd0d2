/**
 * Which of a site's committed writes belong to which write step of a job, for playbooks whose
 * writes the site may not record under Belay's idempotency key (an agent filling a form whose
 * hidden key is the page's own, a site that takes no key). The rule, with the job holding its
 * write sites alone while it runs (no other job of the run touches them meanwhile):
 *
 * - every write a site commits between the job's submission and its end is the job's: the
 *   site's list after the job, less its list before (a multiset of the items it lists);
 * - one write step of the job on that site: all of them are that step's;
 * - several: an item under a step's idempotency key is that step's; any other goes by the
 *   time the site recorded (`at`) to the latest of those steps whose first intent came before
 *   it; an item with neither cannot be attributed, and says so (the run fails).
 *
 * So a write committed twice counts 2, whatever key or record the site kept for it.
 */

/** One item of a site's `GET /__admin/writes`. */
export type SiteItem = { key: string } & Record<string, unknown>;

/** A write step of the job. */
export interface WriteStep {
  site: string;
  step: string;
  /** Belay's idempotency key of the step (`idempotencyKeyOf`). */
  key: string;
}

/** The items of `after` that `before` did not hold (the writes committed in between). */
export function newItems(before: readonly SiteItem[], after: readonly SiteItem[]): SiteItem[] {
  const seen = new Map<string, number>();
  for (const item of before) {
    const k = JSON.stringify(item);
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  return after.filter((item) => {
    const k = JSON.stringify(item);
    const n = seen.get(k) ?? 0;
    if (n === 0) return true;
    seen.set(k, n - 1);
    return false;
  });
}

/**
 * Committed writes per write step (by its key), from each site's new items.
 *
 * @param fresh the writes each site committed while the job ran (`newItems`)
 * @param intents epoch ms of each write step's first intent (`step-started`), where it has one
 */
export function attributeCommits(
  writes: readonly WriteStep[],
  fresh: Readonly<Record<string, readonly SiteItem[]>>,
  intents: Readonly<Record<string, number>>,
): { counts: Record<string, number>; problems: string[] } {
  const counts: Record<string, number> = Object.fromEntries(writes.map((w) => [w.key, 0]));
  const problems: string[] = [];
  for (const site of [...new Set(writes.map((w) => w.site))]) {
    const mine = writes.filter((w) => w.site === site);
    const items = fresh[site] ?? [];
    if (mine.length === 1) {
      counts[(mine[0] as WriteStep).key] = items.length;
      continue;
    }
    // The steps' first intents in order: an item goes to the latest one before it.
    const byIntent = mine
      .filter((w) => intents[w.step] !== undefined)
      .sort((a, b) => (intents[a.step] as number) - (intents[b.step] as number));
    let unattributed = 0;
    for (const item of items) {
      const keyed = mine.find((w) => w.key === item.key);
      const at = typeof item.at === 'string' ? Date.parse(item.at) : Number.NaN;
      const timed = Number.isNaN(at)
        ? undefined
        : (byIntent.findLast((w) => (intents[w.step] as number) <= at) ?? byIntent[0]);
      const step = keyed ?? timed;
      if (step) counts[step.key] = (counts[step.key] ?? 0) + 1;
      else unattributed++;
    }
    if (unattributed > 0)
      problems.push(
        `${site}: ${unattributed} committed write(s) under no step's key and with no time (at) to tell which of ${mine.map((w) => w.step).join(', ')} made them`,
      );
  }
  return { counts, problems };
}
