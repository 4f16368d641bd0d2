/**
 * Managed authentication in the local Anchor service: applications (a target site and its auth
 * flows), identities (one user's credentials for an application) and identity tokens (the
 * single-use, short-lived tokens behind the hosted connect page).
 *
 * Credentials are kept as the service keeps them: in the identity's record under the data dir
 * (mode 0600), and returned only by `GET /v1/identities/{id}/credentials`, as Anchor's API does.
 * No other answer carries them. Tokens are stored by their SHA-256, never in clear.
 *
 * ```
 * <dataDir>/applications/<id>.json   application and its auth flows
 * <dataDir>/identities/<id>.json     identity, with its credentials
 * <dataDir>/tokens/<sha256>.json     identity token: application, callback, expiry, used
 * ```
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from './errors.ts';
import { readJson, writeJsonAtomic } from './store.ts';

/** Anchor's auth-flow methods. */
export type AuthMethod = 'username_password' | 'authenticator' | 'custom';

export interface AuthFlow {
  id: string;
  name: string;
  description: string | null;
  is_recommended: boolean;
  methods: AuthMethod[];
  custom_fields: { name: string }[];
  created_at: string;
  updated_at: string;
}

export interface ApplicationRecord {
  id: string;
  name: string;
  /** The application's URL (`source` on create): where a session's sign-in starts. */
  url: string;
  description: string | null;
  auth_flows: AuthFlow[];
  created_at: string;
  updated_at: string;
}

/** A credential as the SDK sends it (`identities.ts` in anchorbrowser). */
export type Credential =
  | { type: 'username_password'; username?: string; password?: string }
  | { type: 'authenticator'; secret?: string; otp?: string }
  | { type: 'custom'; fields?: { name: string; value: string }[] };

export interface IdentityRecord {
  id: string;
  name: string;
  application_id: string;
  source: string;
  status: 'pending' | 'validated' | 'failed';
  metadata: Record<string, unknown>;
  credentials: Credential[];
  /**
   * The hash of the identity token whose hosted sign-in created it (none for one created through
   * the API). Listed with the application's identities so the caller can tell its own connection's
   * identity from another's; Anchor's documentation names no such field (see /DESIGN.md).
   */
  token_hash?: string;
  created_at: string;
  updated_at: string;
}

export interface TokenRecord {
  tokenHash: string;
  applicationId: string;
  callbackUrl: string;
  expiresAt: string;
  usedAt?: string;
}

/** Anchor: an identity token is single use and expires after 15 minutes. */
export const TOKEN_LIFETIME_MINUTES = 15;

/** SHA-256 hex of a token: what the service keeps and what `token_hash` answers. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Why a token cannot be used now, or `undefined` when it can. Pure: the connect page and the
 * form post ask the same question.
 */
export function tokenRefusal(token: TokenRecord | undefined, now: Date): string | undefined {
  if (!token) return 'This sign-in link is not valid.';
  if (token.usedAt) return 'This sign-in link was used already.';
  if (Date.parse(token.expiresAt) <= now.getTime()) return 'This sign-in link has expired.';
  return undefined;
}

/** What the API shows of an identity: everything but its credentials. */
export function identityView(i: IdentityRecord): Record<string, unknown> {
  return {
    id: i.id,
    name: i.name,
    source: i.source,
    status: i.status,
    metadata: i.metadata,
    created_at: i.created_at,
    updated_at: i.updated_at,
  };
}

/** Applications, identities and tokens of one service instance, kept under its data dir. */
export class IdentityRegistry {
  private readonly dir: string;
  private readonly minuteMs: number;
  private readonly clock: () => Date;

  constructor(options: { dataDir: string; minuteMs: number; clock?: () => Date }) {
    this.dir = options.dataDir;
    this.minuteMs = options.minuteMs;
    this.clock = options.clock ?? ((): Date => new Date());
  }

  async init(): Promise<void> {
    for (const d of ['applications', 'identities', 'tokens'])
      await mkdir(join(this.dir, d), { recursive: true });
  }

  private file(kind: 'applications' | 'identities' | 'tokens', id: string): string {
    const what = { applications: 'Application', identities: 'Identity', tokens: 'Token' }[kind];
    if (!/^[A-Za-z0-9-]{1,128}$/.test(id)) throw new ApiError(404, `${what} not found`);
    return join(this.dir, kind, `${id}.json`);
  }

  private now(): string {
    return this.clock().toISOString();
  }

  async createApplication(input: {
    source: string;
    name?: string;
    description?: string;
  }): Promise<ApplicationRecord> {
    const now = this.now();
    const app: ApplicationRecord = {
      id: randomUUID(),
      name: input.name ?? new URL(input.source).hostname,
      url: input.source,
      description: input.description ?? null,
      // As Anchor: a new application gets the default "Standard authentication" flow.
      auth_flows: [
        {
          id: randomUUID(),
          name: 'Standard authentication',
          description: null,
          is_recommended: true,
          methods: ['username_password'],
          custom_fields: [],
          created_at: now,
          updated_at: now,
        },
      ],
      created_at: now,
      updated_at: now,
    };
    await writeJsonAtomic(this.file('applications', app.id), app);
    return app;
  }

  async application(id: string): Promise<ApplicationRecord> {
    const app = await readJson<ApplicationRecord>(this.file('applications', id));
    if (!app) throw new ApiError(404, 'Application not found');
    return app;
  }

  async applications(): Promise<ApplicationRecord[]> {
    return this.all<ApplicationRecord>('applications');
  }

  async deleteApplication(id: string): Promise<void> {
    await this.application(id);
    for (const identity of await this.identitiesOf(id)) await this.deleteIdentity(identity.id);
    await rm(this.file('applications', id), { force: true });
  }

  async addAuthFlow(
    applicationId: string,
    input: {
      name: string;
      methods: AuthMethod[];
      custom_fields?: { name: string }[];
      description?: string;
      is_recommended?: boolean;
    },
  ): Promise<AuthFlow> {
    const app = await this.application(applicationId);
    const now = this.now();
    const flow: AuthFlow = {
      id: randomUUID(),
      name: input.name,
      description: input.description ?? null,
      is_recommended: input.is_recommended ?? false,
      methods: input.methods,
      custom_fields: input.custom_fields ?? [],
      created_at: now,
      updated_at: now,
    };
    app.auth_flows.push(flow);
    app.updated_at = now;
    await writeJsonAtomic(this.file('applications', app.id), app);
    return flow;
  }

  async deleteAuthFlow(applicationId: string, flowId: string): Promise<void> {
    const app = await this.application(applicationId);
    const kept = app.auth_flows.filter((f) => f.id !== flowId);
    if (kept.length === app.auth_flows.length) throw new ApiError(404, 'Auth flow not found');
    await writeJsonAtomic(this.file('applications', app.id), {
      ...app,
      auth_flows: kept,
      updated_at: this.now(),
    });
  }

  /** A new identity token for the application; the clear token is returned once, never stored. */
  async createToken(
    applicationId: string,
    callbackUrl: string,
  ): Promise<{ token: string; record: TokenRecord }> {
    await this.application(applicationId);
    const token = `it_${randomBytes(24).toString('base64url')}`;
    const record: TokenRecord = {
      tokenHash: tokenHash(token),
      applicationId,
      callbackUrl,
      expiresAt: new Date(this.clock().getTime() + TOKEN_LIFETIME_MINUTES * this.minuteMs).toISOString(),
    };
    await writeJsonAtomic(this.file('tokens', record.tokenHash), record);
    return { token, record };
  }

  async token(token: string): Promise<TokenRecord | undefined> {
    return readJson<TokenRecord>(join(this.dir, 'tokens', `${tokenHash(token)}.json`));
  }

  /** Marks the token used; throws a 410 with the reason when it cannot be used (any more). */
  async useToken(token: string): Promise<TokenRecord> {
    const record = await this.token(token);
    const refused = tokenRefusal(record, this.clock());
    if (refused || !record) throw new ApiError(410, refused ?? 'This sign-in link is not valid.');
    const used = { ...record, usedAt: this.now() };
    await writeJsonAtomic(this.file('tokens', record.tokenHash), used);
    return used;
  }

  async createIdentity(input: {
    applicationId: string;
    name?: string;
    metadata?: Record<string, unknown>;
    credentials: Credential[];
    tokenHash?: string;
  }): Promise<IdentityRecord> {
    const app = await this.application(input.applicationId);
    const now = this.now();
    const identity: IdentityRecord = {
      id: randomUUID(),
      name: input.name ?? 'Unnamed Identity',
      application_id: app.id,
      source: app.url,
      status: 'pending',
      metadata: input.metadata ?? {},
      credentials: input.credentials,
      ...(input.tokenHash ? { token_hash: input.tokenHash } : {}),
      created_at: now,
      updated_at: now,
    };
    await writeJsonAtomic(this.file('identities', identity.id), identity);
    return identity;
  }

  async identity(id: string): Promise<IdentityRecord> {
    const identity = await readJson<IdentityRecord>(this.file('identities', id));
    if (!identity) throw new ApiError(404, 'Identity not found');
    return identity;
  }

  async identitiesOf(applicationId: string): Promise<IdentityRecord[]> {
    return (await this.all<IdentityRecord>('identities')).filter((i) => i.application_id === applicationId);
  }

  async updateIdentity(
    id: string,
    patch: {
      name?: string;
      metadata?: Record<string, unknown>;
      credentials?: Credential[];
      status?: IdentityRecord['status'];
    },
  ): Promise<IdentityRecord> {
    const identity = { ...(await this.identity(id)), ...patch, updated_at: this.now() };
    await writeJsonAtomic(this.file('identities', id), identity);
    return identity;
  }

  async deleteIdentity(id: string): Promise<void> {
    await this.identity(id);
    await rm(this.file('identities', id), { force: true });
  }

  /** The application whose identities these are; throws a 404 naming the first unknown one. */
  async assertIdentities(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.identity(id);
  }

  /** The identity with its application, for a session's sign-in. */
  async forSignIn(id: string): Promise<{ identity: IdentityRecord; application: ApplicationRecord }> {
    const identity = await this.identity(id);
    return { identity, application: await this.application(identity.application_id) };
  }

  private async all<T>(kind: 'applications' | 'identities'): Promise<T[]> {
    const files = (await readdir(join(this.dir, kind))).filter((f) => f.endsWith('.json'));
    const records: (T | undefined)[] = await Promise.all(
      files.map((f) => readJson<T>(join(this.dir, kind, f))),
    );
    return records.filter((r): r is T => r !== undefined);
  }
}
