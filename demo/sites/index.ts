/**
 * Starts the three demo target applications (shop, crm, billing), each on its own loopback
 * port (a separate origin), in this process.
 *
 * @example
 * ```ts
 * const sites = await startSites({ dataDir: '.local/sites' });
 * console.log(sites.shop.baseUrl, sites.adminToken);
 * await sites.stop();
 * ```
 */
import { randomBytes } from 'node:crypto';
import { billingSite } from './billing/index.ts';
import { crmSite } from './crm/index.ts';
import type { FaultFlags } from './http/faults.ts';
import type { LatencyProfile } from './http/latency.ts';
import type { SiteRuntime } from './http/runtime.ts';
import type { RunningSite } from './http/server.ts';
import { startSite } from './http/server.ts';
import { shopSite } from './shop/index.ts';

export interface StartSitesOptions {
  /** Write-through JSON state under this directory (`shop.json`, `crm.json`, `billing.json`); in memory when absent. */
  dataDir?: string;
  /** Port per site; 0 or absent = a free port. */
  ports?: { shop?: number; crm?: number; billing?: number };
  /** Token the admin endpoints require in `x-admin-token`; random when absent. */
  adminToken?: string;
  /**
   * De-duplicate writes by idempotency key (default true). `false`: every write request
   * commits a new record, as on most real sites (see `FaultFlags.dedupe`).
   */
  dedupe?: boolean;
  /** Answer times to imitate on every site (see `http/latency.ts`); absent: as fast as they are. */
  latency?: LatencyProfile;
}

export interface SiteHandle {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
}

export interface StartedSites {
  shop: SiteHandle;
  crm: SiteHandle;
  billing: SiteHandle;
  adminToken: string;
  /**
   * Changes a site's fault switches at once, in this process (the admin endpoint does the
   * same over HTTP): for a test that must switch a fault at an exact instant.
   */
  setFaults(site: 'shop' | 'crm' | 'billing', patch: Partial<FaultFlags>): void;
  /** Stops all three (connections are closed). */
  stop(): Promise<void>;
}

/** Starts shop, crm and billing; resolves when all three listen. */
export async function startSites(options: StartSitesOptions = {}): Promise<StartedSites> {
  const adminToken = options.adminToken ?? randomBytes(18).toString('base64url');
  const started: Array<RunningSite<unknown>> = [];
  const common = {
    adminToken,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.dedupe === undefined ? {} : { dedupe: options.dedupe }),
    ...(options.latency === undefined ? {} : { latency: options.latency }),
  };
  try {
    const shop = await startSite(shopSite, { port: options.ports?.shop ?? 0, ...common });
    started.push(shop as RunningSite<unknown>);
    const crm = await startSite(crmSite, { port: options.ports?.crm ?? 0, ...common });
    started.push(crm as RunningSite<unknown>);
    const billing = await startSite(billingSite, { port: options.ports?.billing ?? 0, ...common });
    started.push(billing as RunningSite<unknown>);
    return {
      shop: { baseUrl: shop.baseUrl },
      crm: { baseUrl: crm.baseUrl },
      billing: { baseUrl: billing.baseUrl },
      adminToken,
      setFaults: (site, patch) => {
        const runtime = { shop, crm, billing }[site].runtime as SiteRuntime<unknown>;
        runtime.store.update((state) => {
          state.faults = { ...state.faults, ...patch };
        });
      },
      stop: async () => {
        await Promise.all(started.map((s) => s.stop()));
      },
    };
  } catch (err) {
    await Promise.allSettled(started.map((s) => s.stop()));
    throw err;
  }
}
