/**
 * The managed-authentication paths of the local Anchor service, as the `anchorbrowser` SDK
 * calls them (`client.applications`, `client.applications.authFlows`, `client.identities`).
 * As Anchor answers them: applications, auth flows and identities flat (no `data` wrapper);
 * the identity token in both shapes the sources disagree on (see /DESIGN.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './errors.ts';
import { readBody, send } from './http.ts';
import { type ApplicationRecord, type IdentityRegistry, identityView } from './identities.ts';
import {
  applicationCreateSchema,
  authFlowCreateSchema,
  identityCreateSchema,
  identityUpdateSchema,
  tokenCreateSchema,
} from './identity-schema.ts';
import { describeIssues } from './schema.ts';

function parse<T>(
  schema: {
    safeParse(v: unknown): { success: true; data: T } | { success: false; error: import('zod').ZodError };
  },
  body: unknown,
): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError(400, describeIssues(parsed.error));
  return parsed.data;
}

function applicationView(app: ApplicationRecord, identityCount: number): Record<string, unknown> {
  return {
    id: app.id,
    name: app.name,
    url: app.url,
    description: app.description,
    identity_count: identityCount,
    auth_methods: [...new Set(app.auth_flows.flatMap((f) => f.methods))],
    allowed_domains: [new URL(app.url).host],
    created_at: app.created_at,
    updated_at: app.updated_at,
  };
}

/**
 * Serves `/v1/applications*` and `/v1/identities*` (the caller checked the API key).
 * Returns false for any other path.
 */
export async function routeIdentities(
  registry: IdentityRegistry,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'v1' || (parts[1] !== 'applications' && parts[1] !== 'identities')) return false;
  const method = req.method ?? 'GET';
  const [, kind, id = '', sub, subId] = parts;
  const shape = `${method} ${kind}${id ? '/:id' : ''}${sub ? `/${sub}` : ''}${subId ? '/:sub' : ''}`;
  switch (shape) {
    case 'POST applications': {
      const body = parse(applicationCreateSchema, await readBody(req));
      const app = await registry.createApplication(body);
      send(res, 201, {
        id: app.id,
        name: app.name,
        url: app.url,
        description: app.description,
        created_at: app.created_at,
      });
      return true;
    }
    case 'GET applications': {
      const search = (url.searchParams.get('search') ?? '').toLowerCase();
      const apps = (await registry.applications()).filter((a) => a.name.toLowerCase().includes(search));
      const views = await Promise.all(
        apps.map(async (a) => applicationView(a, (await registry.identitiesOf(a.id)).length)),
      );
      send(res, 200, { applications: views });
      return true;
    }
    case 'GET applications/:id': {
      const app = await registry.application(id);
      send(res, 200, applicationView(app, (await registry.identitiesOf(id)).length));
      return true;
    }
    case 'DELETE applications/:id':
      await registry.deleteApplication(id);
      send(res, 200, { success: true });
      return true;
    case 'POST applications/:id/auth-flows': {
      const flow = await registry.addAuthFlow(id, parse(authFlowCreateSchema, await readBody(req)));
      send(res, 201, flow);
      return true;
    }
    case 'GET applications/:id/auth-flows':
      send(res, 200, { auth_flows: (await registry.application(id)).auth_flows });
      return true;
    case 'DELETE applications/:id/auth-flows/:sub':
      await registry.deleteAuthFlow(id, subId ?? '');
      send(res, 200, { success: true });
      return true;
    case 'POST applications/:id/tokens': {
      const { callbackUrl } = parse(tokenCreateSchema, await readBody(req));
      const { token, record } = await registry.createToken(id, callbackUrl);
      // The SDK's type says `{ data: { token, expires_at, token_hash } }`; Anchor's newer spec and
      // its docs say flat `{ token, expiresAt, tokenHash }`. Both, so a client reading either works.
      const data = { token, expires_at: record.expiresAt, token_hash: record.tokenHash };
      send(res, 201, { token, expiresAt: record.expiresAt, tokenHash: record.tokenHash, data });
      return true;
    }
    case 'GET applications/:id/identities': {
      await registry.application(id);
      let wanted: Record<string, unknown> = {};
      const metadata = url.searchParams.get('metadata');
      if (metadata) {
        try {
          wanted = JSON.parse(metadata) as Record<string, unknown>;
        } catch {
          throw new ApiError(400, 'metadata: must be a JSON object');
        }
      }
      const search = (url.searchParams.get('search') ?? '').toLowerCase();
      const identities = (await registry.identitiesOf(id))
        .filter((i) => i.name.toLowerCase().includes(search))
        .filter((i) =>
          Object.entries(wanted).every(([k, v]) => JSON.stringify(i.metadata[k]) === JSON.stringify(v)),
        )
        .map((i) => ({
          id: i.id,
          name: i.name,
          auth_flow: null,
          status: i.status,
          ...(i.token_hash ? { token_hash: i.token_hash } : {}),
          created_at: i.created_at,
          updated_at: i.updated_at,
        }));
      send(res, 200, { identities });
      return true;
    }
    case 'POST identities': {
      const body = parse(identityCreateSchema, await readBody(req));
      const source = new URL(body.source);
      const existing = (await registry.applications()).find((a) => new URL(a.url).origin === source.origin);
      const app =
        existing ??
        (await registry.createApplication({
          source: body.source,
          ...(body.applicationName ? { name: body.applicationName } : {}),
          ...(body.applicationDescription ? { description: body.applicationDescription } : {}),
        }));
      const identity = await registry.createIdentity({
        applicationId: app.id,
        ...(body.name ? { name: body.name } : {}),
        ...(body.metadata ? { metadata: body.metadata } : {}),
        credentials: body.credentials ?? [],
      });
      const { id: identityId, name, status, metadata, created_at } = identity;
      send(res, 201, { id: identityId, name, status, metadata, created_at });
      return true;
    }
    case 'GET identities/:id':
      send(res, 200, identityView(await registry.identity(id)));
      return true;
    case 'PUT identities/:id': {
      const patch = parse(identityUpdateSchema, await readBody(req));
      const updated = await registry.updateIdentity(id, patch);
      send(res, 200, {
        id: updated.id,
        name: updated.name,
        metadata: updated.metadata,
        updated_at: updated.updated_at,
      });
      return true;
    }
    case 'DELETE identities/:id':
      await registry.deleteIdentity(id);
      send(res, 200, { message: 'Identity deleted successfully' });
      return true;
    case 'GET identities/:id/credentials': {
      // As Anchor's API: the one answer with the secrets in clear. Belay never calls it.
      const identity = await registry.identity(id);
      send(res, 200, {
        id: identity.id,
        name: identity.name,
        source: identity.source,
        credentials: identity.credentials,
      });
      return true;
    }
    default:
      return false;
  }
}
