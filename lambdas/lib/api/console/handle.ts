import type { Role } from '../../auth/api-keys.ts';
import { JobNotFoundError } from '../../ledger/errors.ts';
import { withTenantScope } from '../../redact.ts';
import { requireRole } from '../auth.ts';
import { rawBody } from '../body.ts';
import { ApiError, RateLimitedError, UnauthorizedError } from '../errors.ts';
import { header } from '../events.ts';
import { cancelJob } from '../jobs/cancel.ts';
import { decide } from '../jobs/decide.ts';
import { completeMfa } from '../jobs/mfa.ts';
import { completeTakeover } from '../jobs/takeover.ts';
import { bodyOf, ok, type Route, type RouteRequest, type RouteResponse, rawResponse } from '../route.ts';
import { cookieOf, SESSION_COOKIE } from './cookies.ts';
import { CsrfError } from './errors.ts';
import type { SafeHtml } from './html.ts';
import { CONSOLE_HEADERS, type ConsoleSection, consoleHeaders, consolePage } from './layout.ts';
import { errorPageBody } from './pages.ts';
import { type ConsoleSession, sameCsrf } from './sessions.ts';

/**
 * How console routes authenticate: the session cookie (never a bearer key), checked on every
 * request (the key it came from must still be valid), rate limited per key like the API, and
 * in the scope of the session's tenant (its texts are redacted with that tenant's secrets).
 * A page without a session goes to the sign-in; an action answers 401. Actions also need the
 * page's CSRF token, and the role the same action needs in the API.
 */

export function redirect(location: string, cookies?: string[]): RouteResponse {
  return rawResponse(303, 'text/plain; charset=utf-8', '', {
    headers: { Location: location, ...CONSOLE_HEADERS },
    ...(cookies ? { cookies } : {}),
  });
}

/** A form-encoded body (the sign-in, and forms posted without the script). */
export function formOf(req: RouteRequest): URLSearchParams {
  return new URLSearchParams(rawBody(req.event, req.deps.maxBodyBytes));
}

async function sessionOf(req: RouteRequest): Promise<ConsoleSession | null> {
  const session = await req.deps.consoleSessions.verify(cookieOf(req.event, SESSION_COOKIE));
  if (!session) return null;
  const rate = await req.deps.rateLimiter.take(session.principal.keyId);
  if (!rate.allowed) throw new RateLimitedError(rate.retryAfterSeconds);
  return session;
}

/** A console page: its title, navigation, refresh, and body for the signed-in person. */
export interface ConsolePageSpec {
  path: string;
  title: (req: RouteRequest) => string;
  current?: ConsoleSection;
  refreshSeconds?: number;
  /** Origins the page's forms are sent on to (redirected), beyond the console's own. */
  formTargets?: (req: RouteRequest, session: ConsoleSession) => readonly string[];
  render(req: RouteRequest, session: ConsoleSession): Promise<SafeHtml | RouteResponse>;
}

/** What frames a page's body: `consolePage`'s frame, and where its forms may be sent on to. */
export interface HtmlPageFrame {
  title: string;
  current?: ConsoleSection;
  refreshSeconds?: number;
  formTargets?: readonly string[];
  /** Origins the page frames (a takeover's live view), beyond none. */
  frameSources?: readonly string[];
}

/** A whole console page for the signed-in person, with the console's security headers. */
export function htmlPage(
  status: number,
  frame: HtmlPageFrame,
  session: ConsoleSession,
  body: SafeHtml,
): RouteResponse {
  const { formTargets, frameSources, ...pageFrame } = frame;
  return rawResponse(status, 'text/html; charset=utf-8', consolePage({ ...pageFrame, session }, body), {
    headers: consoleHeaders(formTargets, frameSources),
  });
}

export function consolePageRoute(spec: ConsolePageSpec): Route {
  return {
    method: 'GET',
    path: spec.path,
    auth: false,
    roles: [],
    async handle(req) {
      const session = await sessionOf(req);
      if (!session) return redirect('/console/sign-in');
      return withTenantScope(session.principal.tenantId, async () => {
        try {
          const out = await spec.render(req, session);
          if (!('value' in out)) return out;
          const frame: HtmlPageFrame = {
            title: spec.title(req),
            ...(spec.current ? { current: spec.current } : {}),
            ...(spec.refreshSeconds ? { refreshSeconds: spec.refreshSeconds } : {}),
            ...(spec.formTargets ? { formTargets: spec.formTargets(req, session) } : {}),
          };
          return htmlPage(200, frame, session, out);
        } catch (err) {
          // Another tenant's job reads exactly like a missing one, here as in the API.
          if (err instanceof JobNotFoundError || (err instanceof ApiError && err.statusCode === 404)) {
            const message =
              err instanceof JobNotFoundError ? `There is no job ${req.params.jobId ?? ''}.` : err.message;
            return htmlPage(404, { title: 'Not found' }, session, errorPageBody(404, message));
          }
          // A page the key's roles do not allow, as the API's route would refuse it.
          if (err instanceof ApiError && err.statusCode === 403)
            return htmlPage(403, { title: 'Not allowed' }, session, errorPageBody(403, err.message));
          throw err;
        }
      });
    },
  };
}

/** A console action's request once its session, CSRF token and role are checked. */
export interface CheckedAction {
  session: ConsoleSession;
  /** The posted form, when the page posted it without the script (answer it with a redirect or a page). */
  form: URLSearchParams | undefined;
  /** The request's fields: the form's (without the CSRF token and empty fields), or its JSON body. */
  body(): unknown;
}

/**
 * What every console action checks first: a live session (401 without one), the page's CSRF
 * token (`X-Belay-CSRF` from the script, the `csrf` field of a form posted without it; 403
 * otherwise), then one of `roles` (403, as the API refuses it). A form-encoded body is a form
 * posted without the script; anything else is the script's JSON.
 */
export async function checkAction(req: RouteRequest, roles: readonly Role[]): Promise<CheckedAction> {
  const session = await sessionOf(req);
  if (!session) throw new UnauthorizedError('sign in to the console again (the session ended)');
  const isForm = /^application\/x-www-form-urlencoded/i.test(header(req.event.headers, 'content-type') ?? '');
  const form = isForm ? formOf(req) : undefined;
  if (
    !sameCsrf(session, form ? (form.get('csrf') ?? undefined) : header(req.event.headers, 'x-belay-csrf'))
  ) {
    throw new CsrfError();
  }
  if (roles.length > 0) requireRole(session.principal, ...roles);
  return {
    session,
    form,
    body: () =>
      form
        ? Object.fromEntries([...form.entries()].filter(([k, v]) => k !== 'csrf' && v !== ''))
        : bodyOf(req),
  };
}

type ActionName = 'decisions' | 'mfa' | 'takeover' | 'cancel';

/**
 * A console action on a job: the same core as the API's route (`decide`, `completeMfa`,
 * `completeTakeover`, `cancelJob`) for the session's principal (see {@link checkAction}); a form posted without the
 * script is answered with a redirect to the job's page.
 */
export function consoleAction(name: ActionName, roles: Role[]): Route {
  return {
    method: 'POST',
    path: `/console/api/jobs/{jobId}/${name}`,
    auth: false,
    roles: [],
    async handle(req) {
      const { session, form, body } = await checkAction(req, roles);
      const jobId = req.params.jobId ?? '';
      const { principal } = session;
      const result = await withTenantScope(principal.tenantId, async () => {
        if (name === 'decisions') return decide(req.deps, principal, jobId, body());
        if (name === 'mfa') return completeMfa(req.deps, principal, jobId, body());
        if (name === 'takeover') return completeTakeover(req.deps, principal, jobId, body());
        const { job, cancelled } = await cancelJob(req.deps, principal, jobId);
        return { jobId: job.jobId, status: job.status, cancelled };
      });
      if (form) return redirect(`/console/jobs/${encodeURIComponent(jobId)}`);
      return ok(result);
    },
  };
}
