import { type ApiKeyStore, hasRole, type Principal, parseRoles, type Role } from '../auth/api-keys.ts';
import { ForbiddenError, UnauthorizedError } from './errors.ts';
import { type AuthorizerEvent, type AuthorizerResult, type HttpApiEvent, header } from './events.ts';
import { anonymousBucket, type RateLimiter } from './rate-limit.ts';

/**
 * Authentication at the edge: the Lambda authorizer (in AWS) and the local server both call
 * {@link authorizeHeaders}; the API handler reads the principal the authorizer attached.
 * The tenant always comes from the key, never from the request.
 */

/** The API key of `Authorization: Bearer <key>`, if any. */
export function bearerToken(headers: Record<string, string | undefined> | undefined): string | undefined {
  const value = header(headers, 'authorization');
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

/** Counting refused requests per source address (see `DEFAULT_ANONYMOUS_RATE_LIMIT`). */
export interface RefusalLimit {
  limiter: RateLimiter;
  sourceIp: string | undefined;
}

/**
 * The authorizer's decision for a request's headers: allowed with the key's tenant, roles and
 * id, or denied. With `refusals`, every denied request takes from its address's bucket, and
 * a denial past the bucket says when to come back (`retryAfterSeconds`: a 429, not a 401).
 */
export async function authorizeHeaders(
  keys: ApiKeyStore,
  headers: Record<string, string | undefined> | undefined,
  refusals?: RefusalLimit,
): Promise<AuthorizerResult & { retryAfterSeconds?: number }> {
  const deny = async (): Promise<AuthorizerResult & { retryAfterSeconds?: number }> => {
    if (!refusals) return { isAuthorized: false };
    const rate = await refusals.limiter.take(anonymousBucket(refusals.sourceIp));
    return rate.allowed
      ? { isAuthorized: false }
      : { isAuthorized: false, retryAfterSeconds: rate.retryAfterSeconds };
  };
  const token = bearerToken(headers);
  if (token === undefined) return deny();
  const principal = await keys.verify(token);
  if (!principal) return deny();
  return {
    isAuthorized: true,
    context: { tenantId: principal.tenantId, roles: principal.roles.join(','), keyId: principal.keyId },
  };
}

/**
 * The Lambda authorizer's core (HTTP API, simple responses). API Gateway answers a denial 403
 * whatever the authorizer says, so a refused address past its bucket is simply denied.
 */
export async function authorizeEvent(
  keys: ApiKeyStore,
  event: AuthorizerEvent,
  limiter?: RateLimiter,
): Promise<AuthorizerResult> {
  const headers = { ...event.headers };
  // With an identity source of `$request.header.Authorization` the header is also here.
  if (header(headers, 'authorization') === undefined && event.identitySource?.[0]) {
    headers.authorization = event.identitySource[0];
  }
  const refusals = limiter ? { limiter, sourceIp: event.requestContext?.http?.sourceIp } : undefined;
  const { isAuthorized, context } = await authorizeHeaders(keys, headers, refusals);
  return context ? { isAuthorized, context } : { isAuthorized };
}

/** The caller, from the authorizer's context on the event; a request without one is refused. */
export function principalOf(event: HttpApiEvent): Principal {
  const ctx = event.requestContext.authorizer?.lambda;
  if (
    !ctx ||
    typeof ctx.tenantId !== 'string' ||
    typeof ctx.keyId !== 'string' ||
    typeof ctx.roles !== 'string'
  ) {
    throw new UnauthorizedError();
  }
  let roles: Role[];
  try {
    roles = parseRoles(ctx.roles);
  } catch {
    throw new UnauthorizedError();
  }
  return { tenantId: ctx.tenantId, keyId: ctx.keyId, roles };
}

/**
 * The tenant a request acts for, as the authorizer said, or `''` (no tenant: a public route or
 * an unauthenticated call). Texts the request answers with are redacted for this tenant only.
 */
export function requestTenant(event: HttpApiEvent): string {
  const tenantId = event.requestContext?.authorizer?.lambda?.tenantId;
  return typeof tenantId === 'string' ? tenantId : '';
}

/** Throws 403 unless the principal holds one of `roles` (admin holds all). */
export function requireRole(principal: Principal, ...roles: Role[]): void {
  if (!roles.some((role) => hasRole(principal, role))) throw new ForbiddenError(roles.join(' or '));
}
