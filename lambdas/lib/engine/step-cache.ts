import type { ActionCacheStore, CacheScope } from '../agent/cache/store.ts';
import type { ActionCacheKey, CacheOffer, StepCache } from '../playbooks/contract.ts';

/**
 * The action cache for one attempt of one step (RunStep's): the step looks entries up and
 * leaves an offer; the engine settles it once the attempt's outcome is known. Only a verified
 * step writes: its action list becomes (or replaces, after a heal) the entry, or the entry it
 * ran from counts a hit. An attempt that ran from an entry and did not verify demotes it.
 */

/** What settling did, for the log and the step's completion entry. */
export type CacheSettled = 'written' | 'hit' | 'healed' | 'demoted' | 'kept' | 'none';

export interface StepCacheSession {
  /** What the step sees (`StepContext.actions.cache`). */
  readonly port: StepCache;
  /** After the attempt: `verified` only once the step's completion is in the ledger. */
  settle(verified: boolean, reason: string): Promise<CacheSettled>;
}

export function stepCacheSession(
  store: ActionCacheStore,
  scope: CacheScope,
  jobId: string,
): StepCacheSession {
  let served: { key: ActionCacheKey; entryId: string } | undefined;
  let offered: CacheOffer | undefined;
  const port: StepCache = {
    lookup: async (key) => {
      const entry = await store.get(scope, key);
      return entry ? { entryId: entry.entryId, actions: entry.actions } : undefined;
    },
    serving: (key, entryId) => {
      served = { key, entryId };
    },
    offer: (offer) => {
      offered = offer;
    },
  };
  return {
    port,
    async settle(verified, reason) {
      if (!verified) {
        if (!served) return 'none';
        await store.demote(scope, served.key, served.entryId, reason);
        return 'demoted';
      }
      if (!offered) return 'none';
      const entry = {
        key: offered.key,
        actions: [...offered.actions],
        goalTemplate: offered.goalTemplate,
        jobId,
      };
      if (offered.served && !offered.healed) {
        await store.hit(scope, offered.key, offered.served);
        return 'hit';
      }
      if (offered.served) {
        return (await store.put(scope, entry, { entryId: offered.served })) ? 'healed' : 'kept';
      }
      await store.put(scope, entry);
      return 'written';
    },
  };
}
