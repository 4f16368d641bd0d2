/**
 * What each target application's site lets the suite do, asked once at the start through the
 * demo sites' admin contract (`/__admin/...` with the `x-admin-token` header, see
 * `demo/sites/http/admin.ts`): count its committed writes, drop a write's response and switch
 * its layout, end its sign-ins. A fault a site cannot take is planned nowhere on it.
 */
import type { SiteAdmin } from '../../demo/sites/admin-client.ts';

/** A target application's site, by the application's name (`shop`, `crm`, ...). */
export type SiteName = string;

/** What a site answers of the admin contract. */
export interface SiteCapabilities {
  /** `GET /__admin/writes` lists its committed writes (`items`, `countsByKey`): they can be counted. */
  records: boolean;
  /** `GET`/`POST /__admin/faults` take the demo sites' flags: a dropped write response, the changed layout. */
  faults: boolean;
  /** `POST /__admin/sessions/expire` ends every sign-in. */
  sessions: boolean;
}

/** A site that answers every part (the default of a plan made without asking). */
export const FULL_CONTRACT: SiteCapabilities = { records: true, faults: true, sessions: true };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

async function answers(call: () => Promise<unknown>, fits: (body: unknown) => boolean): Promise<boolean> {
  try {
    return fits(await call());
  } catch {
    // A 404 (no such route), a 401 (another token), a page that is not JSON, no site at all.
    return false;
  }
}

/**
 * Asks a site (before any job runs: ending its sign-ins then ends nobody's).
 * @example
 * const caps = await siteCapabilities(siteAdmin('http://127.0.0.1:8802', token));
 */
export async function siteCapabilities(admin: SiteAdmin): Promise<SiteCapabilities> {
  const records = await answers(
    () => admin.writes(),
    (b) =>
      isObject(b) &&
      Array.isArray(b.items) &&
      b.items.every((i) => isObject(i) && typeof i.key === 'string') &&
      isObject(b.countsByKey),
  );
  const flags = (b: unknown): boolean =>
    isObject(b) &&
    typeof b.changedLayout === 'boolean' &&
    typeof b.dropNextWriteResponse === 'boolean' &&
    typeof b.dropMode === 'string';
  // Both the read and the write of the flags (an empty change alters nothing).
  const faults =
    (await answers(() => admin.faults(), flags)) && (await answers(() => admin.setFaults({}), flags));
  const sessions = await answers(
    () => admin.expireSessions(),
    (b) => isObject(b) && typeof b.expired === 'number',
  );
  return { records, faults, sessions };
}
