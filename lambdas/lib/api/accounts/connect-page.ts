/**
 * What a person's browser sees at the end of the hosted sign-in: Anchor sends the browser to
 * Belay's callback, so a request that asks for HTML gets a page (the account connected, or why
 * not) with the console's security headers; a program gets the JSON answer.
 */

import { html } from '../console/html.ts';
import { CONSOLE_HEADERS, consolePage } from '../console/layout.ts';
import { ApiError } from '../errors.ts';
import type { HttpApiEvent } from '../events.ts';
import { header } from '../events.ts';
import { type RouteResponse, rawResponse } from '../route.ts';
import type { AccountView } from './schemas.ts';

/** The request is a person's browser (it asks for HTML first), not an API client. */
export function wantsPage(event: HttpApiEvent): boolean {
  return /text\/html/i.test(header(event.headers, 'accept') ?? '');
}

const PAGE_HEADERS = { ...CONSOLE_HEADERS, 'Referrer-Policy': 'no-referrer' };

/** The page of a connection that completed. */
export function connectedPage(account: AccountView): RouteResponse {
  const body = html`<h1>Account connected</h1>
<p>Belay can now act as <strong>${account.label}</strong> on ${account.application} (account <code>${account.accountId}</code>).</p>
<p>You can close this tab, or <a href="/console/accounts">see the accounts in the console</a>.</p>`;
  return rawResponse(200, 'text/html; charset=utf-8', consolePage({ title: 'Account connected' }, body), {
    headers: PAGE_HEADERS,
  });
}

/**
 * The page of a callback Belay refused (used, expired, unknown, another application's
 * identity), with the API's status and its message; any other error is the API's to answer.
 */
export function refusedPage(err: unknown): RouteResponse {
  if (!(err instanceof ApiError) || !err.expose) throw err;
  const body = html`<h1>The account was not connected</h1>
<p>${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.</p>
<p>Nothing was changed. An administrator of your Belay tenant can start a new connection.</p>`;
  return rawResponse(
    err.statusCode,
    'text/html; charset=utf-8',
    consolePage({ title: 'Not connected' }, body),
    {
      headers: PAGE_HEADERS,
    },
  );
}
