/**
 * A job's committed writes per write step: from the sites' own records where a site lists them
 * (`GET /__admin/writes`), else from what the step's probe found by the job's key (`ledger.ts`),
 * with the steps done without acting (already satisfied) marked apart.
 */
import type { AdminWrites } from '../../demo/sites/admin-client.ts';
import { attributeCommits, newItems, type SiteItem } from './attribution.ts';
import type { EntryView } from './clients.ts';
import { alreadySatisfied, probeCount } from './ledger.ts';
import type { JobSpec } from './plan.ts';
import type { SiteName } from './sites.ts';

/** The committed writes of one write step of a job. */
export interface WriteCount {
  step: string;
  /** Its idempotency key. */
  key: string;
  /**
   * Committed writes: from the site's records (with the sites de-duplicating nothing, the
   * default, every committed request is a record of its own), or what the step's probe found by
   * the job's key; null when that cannot be told (the job never reached its final check).
   */
  count: number | null;
  countedBy: 'site' | 'probe';
  /** How a probe's count was read, or why it cannot be told. */
  how?: string;
  /**
   * The step completed without acting: the value it sets was already there (`alreadySatisfied`
   * in its completion). No write of this job is expected: counted apart, never as missing.
   */
  alreadySatisfied: boolean;
}

/**
 * The committed writes of the job's write steps counted on their site, by key: under the step's
 * idempotency key (`counting: key`); else, of what the sites list now (`records`) less what they
 * listed as the job started (`before`), the items on the job's own records (`scope`) or all of
 * them (`counting: site`, the job held the site), split among its steps (`attribution.ts`).
 */
export function siteCounts(
  spec: Pick<JobSpec, 'counting' | 'scope' | 'writes'>,
  before: Readonly<Record<SiteName, readonly SiteItem[]>>,
  records: Readonly<Record<SiteName, AdminWrites>>,
  entries: readonly EntryView[],
): { counts: Record<string, number>; problems: string[] } {
  const counted = spec.writes.filter((w) => w.countedBy === 'site');
  if (spec.counting === 'key') {
    const counts = Object.fromEntries(counted.map((w) => [w.key, records[w.site]?.countsByKey[w.key] ?? 0]));
    return { counts, problems: [] };
  }
  const scope = spec.scope;
  const mine = (item: SiteItem): boolean => !scope || scope.values.includes(String(item[scope.field]));
  const fresh = Object.fromEntries(
    Object.entries(records).map(([site, r]) => [site, newItems(before[site] ?? [], r.items).filter(mine)]),
  );
  const intents: Record<string, number> = {};
  for (const e of entries)
    if (e.type === 'step-started' && e.step && intents[e.step] === undefined)
      intents[e.step] = Date.parse(e.at);
  return attributeCommits(counted, fresh, intents);
}

/** Each write step's count: `counts` (by key) for those counted on their site, the probe's for the others. */
export function writeCounts(
  spec: Pick<JobSpec, 'writes'>,
  counts: Readonly<Record<string, number>>,
  entries: readonly EntryView[],
): WriteCount[] {
  return spec.writes.map((w): WriteCount => {
    const satisfied = alreadySatisfied(entries, w.step);
    if (w.countedBy === 'site')
      return {
        step: w.step,
        key: w.key,
        count: counts[w.key] ?? 0,
        countedBy: 'site',
        alreadySatisfied: satisfied,
      };
    const { count, how } = probeCount(entries, w.step);
    return { step: w.step, key: w.key, count, countedBy: 'probe', how, alreadySatisfied: satisfied };
  });
}
