import { sharedForm } from '../agent/cache/share.ts';
import type { ActionCacheStore, CacheScope } from '../agent/cache/store.ts';
import type { ActionCacheKey, ActionCacheScope, CacheOffer, StepCache } from '../playbooks/contract.ts';

/**
 * The action cache for one attempt of one step (RunStep's): the step looks entries up and
 * leaves an offer; the engine settles it once the attempt's outcome is known. Only a verified
 * step writes: its action list becomes (or replaces, after a heal) the entry, or the entry it
 * ran from counts a hit. An attempt that ran from an entry and did not verify demotes it.
 *
 * A write the application did not confirm is neither: the entry the attempt served from is kept
 * in its `step-unconfirmed` entry (`pending`), and whoever settles the write settles the cache
 * from it (`settlePending`): absent demotes that entry; done writes nothing. A probe's `done`
 * (possibly a model's reading of the page) or a person's word proves the write happened, not that
 * the action list did it: only a step that verified itself writes an entry or counts a hit.
 *
 * A playbook that shares its cache (`actionCache: 'shared'`): a tenant's own entry first, else
 * the playbook's shared one; an entry is settled where it was served from; a new list is kept
 * shared when it holds only the playbook's own text (`sharedForm`), else the tenant's.
 */

/**
 * What an unconfirmed attempt served from, kept in its `step-unconfirmed` entry until the probe
 * says. (Entries written before this rule may also hold an `offer`: it is never written.)
 */
export interface PendingCache {
  /** `shared`: the entry was the playbook's shared one. */
  served?: { key: ActionCacheKey; entryId: string; shared?: boolean };
}

/** What settling did, for the log and the step's completion entry. */
export type CacheSettled = 'written' | 'hit' | 'healed' | 'demoted' | 'kept' | 'none';

export interface StepCacheSession {
  /** What the step sees (`StepContext.actions.cache`). */
  readonly port: StepCache;
  /** After the attempt: `verified` only once the step's completion is in the ledger. */
  settle(verified: boolean, reason: string): Promise<CacheSettled>;
  /** The entry the attempt served from (undefined: none), for an unconfirmed write's entry. */
  pending(): PendingCache | undefined;
}

export function stepCacheSession(
  store: ActionCacheStore,
  scope: CacheScope,
  jobId: string,
  from: PendingCache = {},
  sharing: ActionCacheScope = 'tenant',
): StepCacheSession {
  let served = from.served;
  let offered: CacheOffer | undefined;
  const shared: CacheScope = { ...scope, shared: true };
  /** Entries the lookups found in the shared partition, by id. */
  const fromShared = new Set<string>();
  const scopeOf = (s: { shared?: boolean }): CacheScope => (s.shared ? shared : scope);
  const port: StepCache = {
    lookup: async (key) => {
      const own = await store.get(scope, key);
      if (own) return { entryId: own.entryId, actions: own.actions };
      if (sharing !== 'shared') return undefined;
      const entry = await store.get(shared, key);
      if (entry) fromShared.add(entry.entryId);
      return entry ? { entryId: entry.entryId, actions: entry.actions } : undefined;
    },
    serving: (key, entryId) => {
      served = { key, entryId, ...(fromShared.has(entryId) ? { shared: true } : {}) };
    },
    offer: (offer) => {
      offered = offer;
    },
  };
  return {
    port,
    pending: () => (served ? { served } : undefined),
    async settle(verified, reason) {
      if (!verified) {
        if (!served) return 'none';
        await store.demote(scopeOf(served), served.key, served.entryId, reason);
        return 'demoted';
      }
      if (!offered) return 'none';
      const entry = {
        key: offered.key,
        actions: [...offered.actions],
        goalTemplate: offered.goalTemplate,
        jobId,
      };
      const servedShared = served?.entryId === offered.served && served?.shared === true;
      if (offered.served && !offered.healed) {
        await store.hit(servedShared ? shared : scope, offered.key, offered.served);
        return 'hit';
      }
      // Shared, only with nothing in it but the playbook's own text; else the tenant's.
      const general = sharing === 'shared' ? sharedForm(entry.actions, entry.goalTemplate) : undefined;
      const put = general ? { scope: shared, entry: { ...entry, actions: general } } : { scope, entry };
      if (offered.served && servedShared === (put.scope === shared)) {
        return (await store.put(put.scope, put.entry, { entryId: offered.served })) ? 'healed' : 'kept';
      }
      await store.put(put.scope, put.entry);
      if (!offered.served) return 'written';
      // Healed into another partition: the tenant's own stale list gives way to the shared one
      // (a shared list healed with this tenant's text stays for the others; the tenant's own comes first).
      if (!servedShared)
        await store.demote(scope, offered.key, offered.served, 'healed into the shared entry');
      return 'healed';
    },
  };
}

/**
 * Settles the cache of an unconfirmed write once its outcome is known (after the step's
 * completion, or the probe's `absent`, is in the ledger). `absent` demotes the entry the attempt
 * ran from. `done` (a probe's answer, a person's word) leaves the cache as it is: no entry is
 * written and no hit counted from an attempt that did not verify itself. (A served list that went
 * on past the write with a target the page lacks is demoted by RunStep at once, never kept pending.)
 */
export function settlePending(
  store: ActionCacheStore,
  scope: CacheScope,
  jobId: string,
  pending: PendingCache,
  outcome: 'done' | 'absent',
  sharing: ActionCacheScope = 'tenant',
): Promise<CacheSettled> {
  if (outcome === 'done') return Promise.resolve('none');
  return stepCacheSession(
    store,
    scope,
    jobId,
    { ...(pending.served ? { served: pending.served } : {}) },
    sharing,
  ).settle(false, 'the probe found the write had not happened');
}
