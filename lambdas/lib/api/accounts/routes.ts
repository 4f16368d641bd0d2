import { jsonBody } from '../body.ts';
import { ANY_ROLE, baseUrlOf, type Route, type RouteRequest } from '../route.ts';
import { CONNECT_CALLBACK_PATH, completeConnection, connectionView, startConnection } from './connect.ts';
import { connectedPage, refusedPage, wantsPage } from './connect-page.ts';
import { connectAccount, disconnectAccount, getAccount, listAccounts, toAccountView } from './manage.ts';

/** The connected-accounts routes (role admin). */

const accountParam = (req: RouteRequest): string => req.params.accountId ?? '';
const accountPath = (accountId: string): string => `/accounts/${encodeURIComponent(accountId)}`;

/** The body of `POST /accounts` (a malformed one is refused without quoting it, as every body is). */
function accountBody(req: RouteRequest): unknown {
  return jsonBody(req.event, req.deps.maxBodyBytes);
}

export const ACCOUNT_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/accounts',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const account = await connectAccount(req.deps, req.principal, accountBody(req));
      return {
        statusCode: 201,
        body: { account: toAccountView(req.deps, account) },
        headers: { Location: accountPath(account.accountId) },
      };
    },
  },
  {
    method: 'POST',
    path: '/accounts/connect',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const started = await startConnection(req.deps, req.principal, accountBody(req), baseUrlOf(req));
      return { statusCode: 201, body: { connection: connectionView(started) } };
    },
  },
  {
    // Anchor sends the person's browser here: no API key, the callback key in the path is the credential.
    method: 'GET',
    path: `${CONNECT_CALLBACK_PATH}/{callbackKey}`,
    auth: false,
    roles: ANY_ROLE,
    async handle(req) {
      // A person's browser gets a page either way; a program gets the API's JSON and errors.
      const page = wantsPage(req.event);
      let completed: Awaited<ReturnType<typeof completeConnection>>;
      try {
        completed = await completeConnection(
          req.deps,
          req.params.callbackKey ?? '',
          req.event.queryStringParameters?.identityId,
        );
      } catch (err) {
        if (page) return refusedPage(err);
        throw err;
      }
      const { account, connection } = completed;
      if (page) return connectedPage(toAccountView(req.deps, account));
      return {
        statusCode: 200,
        body: { connectionId: connection.connectionId, account: toAccountView(req.deps, account) },
        headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' },
      };
    },
  },
  {
    method: 'GET',
    path: '/accounts',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const accounts = await listAccounts(req.deps, req.principal);
      return { statusCode: 200, body: { accounts: accounts.map((a) => toAccountView(req.deps, a)) } };
    },
  },
  {
    method: 'GET',
    path: '/accounts/{accountId}',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const account = await getAccount(req.deps, req.principal, accountParam(req));
      return { statusCode: 200, body: { account: toAccountView(req.deps, account) } };
    },
  },
  {
    method: 'DELETE',
    path: '/accounts/{accountId}',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const { account, jobsStopped } = await disconnectAccount(req.deps, req.principal, accountParam(req));
      return { statusCode: 200, body: { account: toAccountView(req.deps, account), jobsStopped } };
    },
  },
];
