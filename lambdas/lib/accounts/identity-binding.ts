/**
 * Which Anchor identity a tenant may map to an account. One Anchor organization serves every
 * tenant, and Anchor's application for one of Belay's (`belay-<app>`) is shared by all of them, so
 * "an identity of the application" is not enough: whoever held a callback URL could bind any
 * identity of it, and `POST /accounts` could name any identity id. These pure rules decide from
 * what Anchor reports of the identity; the claim (`IDENTITY#<id>`, conditioned on no other tenant)
 * is still written in the same transaction as the account.
 */
import type { PendingConnection } from './connections.ts';

/** What Anchor reports of one identity, as far as the binding needs it. */
export interface AnchorIdentity {
  id: string;
  /** When Anchor created it (the application's identity list gives it). */
  createdAt?: string;
  /**
   * The hash of the identity token whose sign-in created it, where the provider reports it (the
   * local service does; Anchor's documentation names no such field, so there it is absent).
   */
  tokenHash?: string;
  /** Its metadata: Belay tags a connected identity with `belayTenant` and `belayAccount`. */
  metadata: Record<string, unknown>;
}

/** Anchor's clock and ours may differ a little; an identity a minute older than the connection is still its. */
export const CLOCK_SKEW_MS = 60_000;

/**
 * Is `identity` the one this connection's sign-in created? It must exist in the connection's
 * Anchor application, come from this connection's token where the provider says which token made
 * it, be created between the connection's start and its token's expiry, and be tagged for no
 * account yet. Answers `undefined` when it is, else why not.
 */
export function connectionIdentityRefusal(
  identity: AnchorIdentity | undefined,
  connection: Pick<PendingConnection, 'tokenHash' | 'createdAt' | 'tokenExpiresAt'>,
): 'not-found' | 'other-token' | 'outside-window' | 'claimed' | undefined {
  if (!identity) return 'not-found';
  if (identity.tokenHash !== undefined && identity.tokenHash !== connection.tokenHash) return 'other-token';
  if (identity.createdAt !== undefined) {
    const at = Date.parse(identity.createdAt);
    const from = Date.parse(connection.createdAt) - CLOCK_SKEW_MS;
    const to = Date.parse(connection.tokenExpiresAt) + CLOCK_SKEW_MS;
    if (!Number.isFinite(at) || at < from || at > to) return 'outside-window';
  }
  if (identity.metadata.belayAccount !== undefined) return 'claimed';
  return undefined;
}

/**
 * May `tenantId` connect `identity` by naming its id (`POST /accounts`)? Unknown to Anchor (or not
 * an identity of this application's Anchor application): `unknown`; tagged for another tenant:
 * `other-tenant`. An identity no tenant has claimed yet is claimed by the account's transaction.
 */
export function namedIdentityRefusal(
  identity: AnchorIdentity | undefined,
  tenantId: string,
): 'unknown' | 'other-tenant' | undefined {
  if (!identity) return 'unknown';
  const tagged = identity.metadata.belayTenant;
  if (tagged !== undefined && tagged !== tenantId) return 'other-tenant';
  return undefined;
}
