import {
  connectAccount,
  disconnectAccount,
  getAccount,
  listAccounts,
  toAccountView,
} from '../accounts/manage.ts';
import { buildCostReport } from '../reports/cost.ts';
import { jobsInRange, ReportTooLargeError } from '../reports/jobs-in-range.ts';
import { jsonBody } from './body.ts';
import { BadRequestError, UnprocessableError } from './errors.ts';
import { CostReportQuerySchema } from './report-schemas.ts';
import type { Route, RouteRequest } from './routes.ts';
import { fieldIssues } from './schemas.ts';

/** The connected-accounts and reports routes (role admin), part of `ROUTES`. */

const accountParam = (req: RouteRequest): string => req.params.accountId ?? '';
const accountPath = (accountId: string): string => `/accounts/${encodeURIComponent(accountId)}`;

/**
 * The body of `POST /accounts`. A malformed body is refused without quoting it: the JSON
 * parser's message shows a piece of the text, which here may be a password.
 */
function accountBody(req: RouteRequest): unknown {
  try {
    return jsonBody(req.event, req.deps.maxBodyBytes);
  } catch (err) {
    if (err instanceof BadRequestError && err.code === 'invalid_json') {
      throw new BadRequestError(
        'invalid_json',
        'the body is not valid JSON (Content-Type: application/json)',
      );
    }
    throw err;
  }
}

/** Longest period a cost report covers. */
export const MAX_REPORT_DAYS = 366;
const DAY_MS = 86_400_000;

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

export const REPORT_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/reports/cost',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const query = CostReportQuerySchema.safeParse(req.event.queryStringParameters ?? {});
      if (!query.success) {
        throw new BadRequestError('invalid_query', 'the query is not valid: see details', {
          details: fieldIssues(query.error, 'query'),
        });
      }
      const to = new Date(query.data.to ?? req.deps.engine.clock().toISOString());
      const from = new Date(query.data.from ?? to.getTime() - 30 * DAY_MS);
      if (from.getTime() >= to.getTime() || to.getTime() - from.getTime() > MAX_REPORT_DAYS * DAY_MS) {
        throw new UnprocessableError(
          'invalid_period',
          `from must be before to, at most ${MAX_REPORT_DAYS} days apart`,
          {
            details: [{ field: 'query.from', message: 'is not before to, or too far from it' }],
          },
        );
      }
      const range = { from: from.toISOString(), to: to.toISOString() };
      let jobs: Awaited<ReturnType<typeof jobsInRange>>;
      try {
        jobs = await jobsInRange(
          { ...req.deps, ledger: req.deps.engine.ledger },
          req.principal.tenantId,
          range,
        );
      } catch (err) {
        if (err instanceof ReportTooLargeError) {
          throw new UnprocessableError('period_too_large', err.message, {
            details: [{ field: 'query.from', message: 'ask for a shorter period' }],
          });
        }
        throw err;
      }
      return {
        statusCode: 200,
        body: buildCostReport({
          tenantId: req.principal.tenantId,
          ...range,
          jobs,
          now: req.deps.engine.clock(),
        }),
      };
    },
  },
];
