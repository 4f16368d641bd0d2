import type { Principal } from '../auth/api-keys.ts';
import { ProvisionedThroughputExceededException } from '../aws/sdk/client-dynamodb.ts';
import { SessionUnavailableError } from '../browser/errors.ts';
import {
  IllegalTransitionError,
  InvalidInputError,
  JobNotFoundError,
  LedgerUnavailableError,
  StaleCheckpointError,
} from '../ledger/errors.ts';
import { withTenantScope } from '../redact.ts';
import { principalOf, requestTenant, requireRole } from './auth.ts';
import { rawBody } from './body.ts';
import type { ApiDeps } from './deps.ts';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  MethodNotAllowedError,
  NotFoundError,
  RateLimitedError,
  ServiceUnavailableError,
} from './errors.ts';
import type { HttpApiEvent, HttpApiResult } from './events.ts';
import { anonymousBucket } from './rate-limit.ts';
import { ROUTES, type Route } from './routes.ts';
import { ID_PATTERN } from './schemas.ts';

/** The route for a method and path, with its path parameters; `null` when no route has the path. */
export function matchRoute(
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | { route: null; allowed: string[] } {
  const segments = path.replace(/\/+$/, '').split('/');
  const allowed: string[] = [];
  for (const route of ROUTES) {
    const pattern = route.path.split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matches = true;
    for (let i = 0; i < pattern.length && matches; i++) {
      const p = pattern[i] as string;
      const s = segments[i] as string;
      if (p.startsWith('{') && p.endsWith('}')) {
        let value: string;
        try {
          value = decodeURIComponent(s);
        } catch {
          value = s;
        }
        params[p.slice(1, -1)] = value;
        matches = value.length > 0;
      } else {
        matches = p === s;
      }
    }
    if (!matches) continue;
    if (route.method === method.toUpperCase()) return { route, params };
    allowed.push(route.method);
  }
  return { route: null, allowed };
}

const ANONYMOUS: Principal = { tenantId: '', roles: [], keyId: 'anonymous' };

/**
 * Answers one API request: route, body size, principal (from the authorizer's context),
 * rate limit, role, then the route's handler, all in the scope of the request's tenant (its
 * texts are redacted with that tenant's secrets, `withTenantScope`). Throws `ApiError`s (the error middleware makes
 * the response); domain errors of the ledger are translated here, so a job of another
 * tenant is exactly the 404 of a missing one.
 */
export function handleApiEvent(deps: ApiDeps, event: HttpApiEvent): Promise<HttpApiResult> {
  return withTenantScope(requestTenant(event), () => answer(deps, event));
}

async function answer(deps: ApiDeps, event: HttpApiEvent): Promise<HttpApiResult> {
  const method = event.requestContext.http.method;
  const path = event.rawPath || event.requestContext.http.path;
  const match = matchRoute(method, path);
  if (match.route === null) {
    if (match.allowed.length > 0) throw new MethodNotAllowedError(method, match.allowed);
    throw new NotFoundError(`there is no ${path}; see GET /openapi.json`);
  }
  const { route, params } = match;
  rawBody(event, deps.maxBodyBytes);
  let principal = ANONYMOUS;
  if (route.auth) {
    principal = principalOf(event);
    const rate = await deps.rateLimiter.take(principal.keyId);
    if (!rate.allowed) throw new RateLimitedError(rate.retryAfterSeconds);
    if (route.roles.length > 0) requireRole(principal, ...route.roles);
  } else {
    // No key to count against (Anchor's webhooks, the OpenAPI document): count the address.
    const rate = await deps.anonymousRateLimiter.take(anonymousBucket(event.requestContext.http.sourceIp));
    if (!rate.allowed) throw new RateLimitedError(rate.retryAfterSeconds);
  }
  if (params.jobId !== undefined && !ID_PATTERN.test(params.jobId)) {
    throw new NotFoundError(`job ${params.jobId} not found`);
  }
  if (params.accountId !== undefined && !ID_PATTERN.test(params.accountId)) {
    throw new NotFoundError(`account ${params.accountId} not found`);
  }
  let response: Awaited<ReturnType<Route['handle']>>;
  try {
    response = await route.handle({
      event,
      deps,
      principal,
      params,
      dispatch: (next) => handleApiEvent(deps, next),
    });
  } catch (err) {
    throw translateError(err, params.jobId);
  }
  const cookies = response.cookies ? { cookies: response.cookies } : {};
  if (response.raw) {
    return {
      statusCode: response.statusCode,
      headers: { 'Cache-Control': 'no-store', ...response.headers },
      body: response.raw.body,
      isBase64Encoded: response.raw.isBase64Encoded,
      ...cookies,
    };
  }
  return {
    statusCode: response.statusCode,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...response.headers },
    body: JSON.stringify(response.body),
    ...cookies,
  };
}

/** Domain errors as API errors; anything unknown stays as it is (a 500 that says nothing). */
export function translateError(err: unknown, jobId: string | undefined): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof JobNotFoundError)
    return new NotFoundError(`job ${jobId ?? err.jobId} not found`, { cause: err });
  if (err instanceof LedgerUnavailableError) return new ServiceUnavailableError(err.message, { cause: err });
  if (err instanceof InvalidInputError) {
    return new BadRequestError('invalid_request', err.message, {
      cause: err,
      details: [{ field: err.field, message: err.message }],
    });
  }
  if (err instanceof StaleCheckpointError) {
    return new ConflictError('job_busy', 'the job changed while handling the request; send it again', {
      cause: err,
    });
  }
  if (err instanceof IllegalTransitionError) {
    return new ConflictError('conflict', `job ${err.jobId} is ${err.from}: ${err.message}`, {
      cause: err,
      details: { status: err.from },
    });
  }
  if (err instanceof SessionUnavailableError || err instanceof ProvisionedThroughputExceededException) {
    return new ServiceUnavailableError(err.message, { cause: err });
  }
  return err;
}
