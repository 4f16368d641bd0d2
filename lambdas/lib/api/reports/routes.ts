import { BadRequestError, UnprocessableError } from '../errors.ts';
import type { Route } from '../route.ts';
import { fieldIssues } from '../schemas.ts';
import { buildCostReport } from './cost.ts';
import { ReportTooLargeError } from './errors.ts';
import { jobsInRange } from './jobs-in-range.ts';
import { CostReportQuerySchema } from './schemas.ts';

/** The reports routes (role admin). */

/** Longest period a cost report covers. */
export const MAX_REPORT_DAYS = 366;
const DAY_MS = 86_400_000;

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
      // A time with an offset may land past year 9999 (9999-12-31T23:59:59-23:59), where ISO
      // text becomes `+010000-...` and no longer sorts with the jobs' creation times.
      for (const [field, time] of [
        ['query.to', to],
        ['query.from', from],
      ] as const) {
        if (Number.isNaN(time.getTime()) || !/^\d{4}-/.test(time.toISOString())) {
          throw new BadRequestError('invalid_query', 'the query is not valid: see details', {
            details: [{ field, message: 'must be a time from year 0000 to 9999 (UTC)' }],
          });
        }
      }
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
