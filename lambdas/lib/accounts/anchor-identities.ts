/**
 * Anchor's managed authentication through the official `anchorbrowser` SDK: the application
 * Anchor keeps for each of Belay's, identity tokens for its hosted sign-in (OmniConnect), and
 * the identities it returns. Checked against the SDK's code (anchorbrowser 0.16.3,
 * `src/resources/applications/applications.ts`, `src/resources/identities.ts`):
 * `applications.list({ search })`, `applications.create({ source, name, description })`,
 * `applications.createIdentityToken(appId, { callbackUrl })`, `applications.listIdentities(appId)`,
 * `identities.update(id, { metadata })`, `identities.delete(id)`. Belay never calls
 * `identities.retrieveCredentials`: it has no use for a person's password.
 */
import type AnchorbrowserClient from 'anchorbrowser';
import { NotFoundError } from 'anchorbrowser/core/error';
import { ConfigError } from '../config.ts';
import type { AnchorIdentity } from './identity-binding.ts';

/** Anchor's hosted sign-in page; the token goes in its `token` query parameter. */
export const ANCHOR_CONNECT_PAGE_URL = 'https://app.anchorbrowser.io/identity/create';

/** A token for the hosted sign-in: single use, short-lived (Anchor: 15 minutes). */
export interface IdentityToken {
  token: string;
  /** Anchor's hash of the token, kept instead of the token. */
  tokenHash: string;
  /** When Anchor stops accepting the token. */
  expiresAt: Date;
}

/** What Belay asks of Anchor's applications and identities. */
export interface AnchorIdentities {
  /** The id of Anchor's application for one of Belay's (found by name, created when missing). */
  applicationFor(app: { name: string; baseUrl: string }): Promise<string>;
  /** A token for the hosted sign-in; Anchor sends the person back to `callbackUrl?identityId=`. */
  createToken(applicationId: string, callbackUrl: string): Promise<IdentityToken>;
  /** The hosted sign-in page's URL for a token. */
  connectPageUrl(token: string): string;
  /**
   * The identity as Anchor reports it, if it is one of the application's (undefined when it is
   * not, or does not exist): when it was created, the token that created it where reported, and
   * its metadata.
   */
  findIdentity(applicationId: string, identityId: string): Promise<AnchorIdentity | undefined>;
  /** Tags the identity with the account it serves (metadata only: no credentials). */
  tagIdentity(identityId: string, metadata: Record<string, string>): Promise<void>;
  /** Deletes the identity at Anchor; true when it existed. */
  deleteIdentity(identityId: string): Promise<boolean>;
}

/** Anchor's application name for one of Belay's: one per Belay application and deployment. */
export function anchorApplicationName(application: string): string {
  return `belay-${application}`;
}

/**
 * The token of `applications.createIdentityToken`'s answer. The SDK types it
 * `{ data: { token, expires_at, token_hash } }`; Anchor's newer spec and its docs show flat
 * `{ token, expiresAt, tokenHash }`. Either is read; an answer with no token is refused.
 */
export function readIdentityToken(answer: unknown, now: Date, lifetimeMinutes = 15): IdentityToken {
  const flat = (answer ?? {}) as Record<string, unknown>;
  const data = (flat.data ?? {}) as Record<string, unknown>;
  const pick = (...values: unknown[]): string | undefined =>
    values.find((v): v is string => typeof v === 'string' && v !== '');
  const token = pick(data.token, flat.token);
  if (!token) throw new TypeError('Anchor answered the identity token request without a token');
  const expires = Date.parse(pick(data.expires_at, flat.expiresAt, flat.expires_at) ?? '');
  const latest = now.getTime() + lifetimeMinutes * 60_000;
  return {
    token,
    tokenHash: pick(data.token_hash, flat.tokenHash, flat.token_hash) ?? '',
    // Never later than Anchor's documented lifetime, whatever the answer says.
    expiresAt: new Date(Number.isFinite(expires) ? Math.min(expires, latest) : latest),
  };
}

/** The part of the SDK client used here. */
export type AnchorIdentitiesClient = Pick<AnchorbrowserClient, 'applications' | 'identities'>;

export interface AnchorIdentitiesConfig {
  /** The SDK client, built on first use (the SDK takes a while to load; most API calls never need it). */
  client: () => Promise<AnchorIdentitiesClient>;
  /** The hosted sign-in page (default Anchor's; the local stack's own service locally). */
  connectPageUrl?: string;
  clock?: () => Date;
}

/** Anchor's identities through the SDK. Application ids are looked up once per process. */
export function createAnchorIdentities(config: AnchorIdentitiesConfig): AnchorIdentities {
  let loading: Promise<AnchorIdentitiesClient> | undefined;
  const sdk = (): Promise<AnchorIdentitiesClient> => {
    loading ??= config.client();
    loading.catch(() => {
      loading = undefined;
    });
    return loading;
  };
  const clock = config.clock ?? ((): Date => new Date());
  const page = config.connectPageUrl || ANCHOR_CONNECT_PAGE_URL;
  const call = { timeout: 15_000, maxRetries: 2 };
  const appIds = new Map<string, Promise<string>>();

  const findOrCreate = async (app: { name: string; baseUrl: string }): Promise<string> => {
    const name = anchorApplicationName(app.name);
    const listed = await (await sdk()).applications.list({ search: name }, call);
    const found = listed.applications?.find((a) => a.name === name && a.id);
    if (found?.id) return found.id;
    // No idempotency key on create: a retried create could make a second application, so one attempt.
    const created = await (await sdk()).applications.create(
      { source: app.baseUrl, name, description: `Belay application ${app.name}` },
      { ...call, maxRetries: 0 },
    );
    if (!created.id) throw new TypeError('Anchor created an application without an id');
    return created.id;
  };

  return {
    applicationFor(app) {
      let id = appIds.get(app.name);
      if (!id) {
        id = findOrCreate(app);
        appIds.set(app.name, id);
        id.catch(() => appIds.delete(app.name));
      }
      return id;
    },
    async createToken(applicationId, callbackUrl) {
      const answer = await (await sdk()).applications.createIdentityToken(
        applicationId,
        { callbackUrl },
        call,
      );
      return readIdentityToken(answer, clock());
    },
    connectPageUrl(token) {
      const url = new URL(page);
      url.searchParams.set('token', token);
      return url.toString();
    },
    async findIdentity(applicationId, identityId) {
      const client = await sdk();
      const listed = await client.applications.listIdentities(applicationId, {}, call);
      const found = (listed.identities ?? []).find((i) => i.id === identityId);
      if (!found) return undefined;
      let metadata: Record<string, unknown> = {};
      try {
        metadata = (await client.identities.retrieve(identityId, call)).metadata ?? {};
      } catch (err) {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      }
      // Not in the SDK's type: reported by the local service, not documented by Anchor.
      const tokenHash = (found as { token_hash?: unknown }).token_hash;
      return {
        id: identityId,
        ...(found.created_at ? { createdAt: found.created_at } : {}),
        ...(typeof tokenHash === 'string' && tokenHash ? { tokenHash } : {}),
        metadata,
      };
    },
    async tagIdentity(identityId, metadata) {
      await (await sdk()).identities.update(identityId, { metadata }, call);
    },
    async deleteIdentity(identityId) {
      try {
        await (await sdk()).identities.delete(identityId, call);
        return true;
      } catch (err) {
        if (err instanceof NotFoundError) return false;
        throw err;
      }
    },
  };
}

/**
 * Anchor's identities from the environment: `ANCHORBROWSER_API_KEY` (resolved from its secret
 * by the caller), `ANCHORBROWSER_BASE_URL` (optional) and `ANCHOR_CONNECT_PAGE_URL` (optional:
 * the local stack points it at its own service's connect page).
 */
export function anchorIdentitiesFromEnv(env: NodeJS.ProcessEnv): AnchorIdentities {
  const apiKey = env.ANCHORBROWSER_API_KEY?.trim() ?? '';
  const baseURL = env.ANCHORBROWSER_BASE_URL?.trim() || undefined;
  return createAnchorIdentities({
    client: async () => {
      if (!apiKey)
        throw new ConfigError(
          'ANCHORBROWSER_API_KEY',
          'is not set: accounts cannot be connected through Anchor',
        );
      const { default: Anchorbrowser } = await import('anchorbrowser');
      return new Anchorbrowser({ apiKey, ...(baseURL ? { baseURL } : {}) });
    },
    ...(env.ANCHOR_CONNECT_PAGE_URL?.trim() ? { connectPageUrl: env.ANCHOR_CONNECT_PAGE_URL.trim() } : {}),
  });
}

/** For a deployment (or a test stack) with no Anchor: connecting through it fails with a ConfigError. */
export function unavailableAnchorIdentities(): AnchorIdentities {
  return anchorIdentitiesFromEnv({});
}
