import { hasRole, type Principal } from '../../auth/api-keys.ts';
import { withTenantScope } from '../../redact.ts';
import {
  connectionView,
  hostedSignInApplications,
  hostedSignInOrigin,
  type StartedConnection,
  startConnection,
} from '../accounts/connect.ts';
import { listAccounts, toAccountView } from '../accounts/manage.ts';
import type { AccountView } from '../accounts/schemas.ts';
import { requireRole } from '../auth.ts';
import { ApiError, BadRequestError, UnprocessableError } from '../errors.ts';
import { baseUrlOf, ok, type Route, type RouteRequest, type RouteResponse } from '../route.ts';
import { statusBadge, time } from './format.ts';
import { type ConsolePageSpec, checkAction, type HtmlPageFrame, htmlPage, redirect } from './handle.ts';
import { html, type SafeHtml } from './html.ts';
import type { ConsoleSession } from './sessions.ts';

/**
 * The console's accounts: the tenant's connected accounts (what `GET /accounts` answers, never a
 * credential: the account items hold none), and for an admin the form that connects one through
 * Anchor's hosted sign-in. The form's action calls the API's own `startConnection` and sends the
 * browser on to Anchor's page (a redirect for the plain form, a navigation by the script); the
 * page's CSP lets its form go on to that page's origin and nowhere else.
 */

const CONNECT_ACTION_PATH = '/console/api/accounts/connect';

const CONNECTED_WITH: Readonly<Record<NonNullable<AccountView['connectedWith']>, string>> = {
  identity: 'Anchor identity',
  credentials: 'credentials',
};

export interface AccountsPageInput {
  accounts: readonly AccountView[];
  /** The applications an account may be connected to through the hosted sign-in. */
  applications: readonly string[];
  principal: Principal;
  csrf: string;
  /** Why the last connection did not start, in the console's words (never the request's text). */
  error?: string;
}

function accountRow(a: AccountView): SafeHtml {
  // An account stored without `connectedWith` signs in with credentials (the engine reads it so).
  const how = CONNECTED_WITH[a.connectedWith ?? 'credentials'];
  return html`<tr>
      <td>${a.label}</td>
      <td><code>${a.accountId}</code></td>
      <td>${a.application}</td>
      <td>${how}</td>
      <td>${statusBadge(a.status)}${a.revokedAt ? html` ${time(a.revokedAt)}` : ''}</td>
      <td>${time(a.createdAt)}</td>
    </tr>`;
}

function connectForm(input: AccountsPageInput): SafeHtml {
  const { applications, principal, csrf, error } = input;
  if (!hasRole(principal, 'admin')) {
    return html`<p class="note">Connecting an account needs the admin role; your key has ${principal.roles.join(', ')}.</p>`;
  }
  if (applications.length === 0)
    return html`<p class="note">This deployment has no applications to connect.</p>`;
  return html`<p>Choose the application and name the account. You go on to the sign-in page of Anchor, the browser service: the password you type there stays with Anchor and never reaches Belay. Anchor then sends you back, and the account is listed here.</p>
  ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
  <form class="answer" method="post" action="${CONNECT_ACTION_PATH}" data-belay-form="connect">
    <input type="hidden" name="csrf" value="${csrf}">
    <label for="connect-application">Application</label>
    <select id="connect-application" name="application" required>
      <option value="">Choose an application</option>
      ${applications.map((a) => html`<option value="${a}">${a}</option>`)}
    </select>
    <label for="connect-label">Label (a name for people, such as “Shop (Ada)”)</label>
    <input id="connect-label" name="label" maxlength="100" required autocomplete="off">
    <div class="buttons"><button type="submit">Continue to the sign-in</button></div>
  </form>`;
}

/** The accounts page's body: the list, then the connect form (or why there is none). */
export function accountsBody(input: AccountsPageInput): SafeHtml {
  const { accounts } = input;
  return html`<h1>Accounts</h1>
  <p>The accounts jobs of this tenant may act as, one per application and person.</p>
  ${
    accounts.length === 0
      ? html`<p>No accounts yet.</p>`
      : html`<table>
    <caption>Connected and revoked accounts, oldest first.</caption>
    <thead><tr><th scope="col">Label</th><th scope="col">Account</th><th scope="col">Application</th><th scope="col">Connected with</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
    <tbody>${accounts.map(accountRow)}</tbody>
  </table>`
  }
  <h2>Connect an account</h2>
  ${connectForm(input)}`;
}

/** The page's input for the session's tenant: its accounts as the API shows them. */
async function pageInput(
  req: RouteRequest,
  session: ConsoleSession,
  error?: string,
): Promise<AccountsPageInput> {
  const accounts = await listAccounts(req.deps, session.principal);
  return {
    accounts: accounts.map((a) => toAccountView(req.deps, a)),
    applications: hostedSignInApplications(req.deps),
    principal: session.principal,
    csrf: session.csrf,
    ...(error ? { error } : {}),
  };
}

/** Only an admin's page has the form, so only its CSP lets a form go on to Anchor's page. */
function formTargets(req: RouteRequest, session: ConsoleSession): string[] {
  return hasRole(session.principal, 'admin') ? [hostedSignInOrigin(req.deps)] : [];
}

export const ACCOUNTS_PAGE: ConsolePageSpec = {
  path: '/console/accounts',
  title: () => 'Accounts',
  current: 'accounts',
  formTargets,
  async render(req, session) {
    // As `GET /accounts`: the tenant's accounts are an admin's to see.
    requireRole(session.principal, 'admin');
    return accountsBody(await pageInput(req, session));
  },
};

/**
 * A connection refused for what the form sent, in the console's words: the API's messages may
 * quote the request (the application asked for), which a page must not repeat. Other errors
 * (no API URL, Anchor failing) are left as they are.
 */
export function inputProblem(err: unknown): ApiError | undefined {
  if (!(err instanceof ApiError)) return undefined;
  if (err.code === 'unknown_application') {
    return new UnprocessableError('unknown_application', 'Choose one of the applications in the list.', {
      details: [{ field: 'application', message: 'one of the applications in the list' }],
    });
  }
  if (err.code !== 'invalid_request') return undefined;
  const fields = new Set(
    (Array.isArray(err.details) ? (err.details as { field?: unknown }[]) : []).map((d) => String(d.field)),
  );
  const lines: string[] = [];
  const details: { field: string; message: string }[] = [];
  if (fields.delete('application')) {
    lines.push('Choose an application.');
    details.push({ field: 'application', message: 'one of the applications in the list' });
  }
  if (fields.delete('label')) {
    lines.push('Give the account a label of up to 100 characters, such as “Shop (Ada)”.');
    details.push({ field: 'label', message: '1 to 100 characters' });
  }
  if (fields.size > 0 || lines.length === 0)
    lines.push('The form sent more than it asks for: reload the page and try again.');
  return new BadRequestError('invalid_request', lines.join(' '), { details });
}

/**
 * `POST /console/api/accounts/connect` (role admin, as `POST /accounts/connect`): starts the hosted
 * sign-in with the API's core and sends the browser there: the plain form gets a 303 to Anchor's
 * page, the script the API's JSON answer (it navigates to `connectUrl`). Input it refuses changes
 * nothing: the form gets the page again with what to fix, the script the error.
 */
export const CONNECT_ACCOUNT_ACTION: Route = {
  method: 'POST',
  path: CONNECT_ACTION_PATH,
  auth: false,
  roles: [],
  async handle(req): Promise<RouteResponse> {
    const { session, form, body } = await checkAction(req, ['admin']);
    return withTenantScope(session.principal.tenantId, async () => {
      let started: StartedConnection;
      try {
        started = await startConnection(req.deps, session.principal, body(), baseUrlOf(req));
      } catch (err) {
        const problem = inputProblem(err);
        if (!problem) throw err;
        if (!form) throw problem;
        const frame: HtmlPageFrame = {
          title: 'Accounts',
          current: 'accounts',
          formTargets: formTargets(req, session),
        };
        const page = accountsBody(await pageInput(req, session, problem.message));
        return htmlPage(problem.statusCode, frame, session, page);
      }
      if (form) return redirect(started.connectUrl);
      return ok({ connection: connectionView(started) }, 201);
    });
  },
};
