import type { RegisterPaths } from '../openapi-kit.ts';
import { CostReportQuerySchema, CostReportSchema } from './schemas.ts';

/** The reports paths of the OpenAPI document. */
export const registerReportPaths: RegisterPaths = (r, { security, json, error, common }) => {
  const admin = { 403: error('The key lacks the admin role.'), ...common };
  r.registerPath({
    method: 'get',
    path: '/reports/cost',
    summary: 'Cost per verified completion of the tenant’s jobs over a period (role admin)',
    description:
      'Jobs submitted in [from, to): verified completions, usage and dollars by component (summed over every ledger entry, priced at the dated rates), cost per verified completion, retries, human interventions and idle browser time (session time not spent in steps).',
    security,
    request: { query: CostReportQuerySchema },
    responses: {
      200: json(CostReportSchema, 'The report.'),
      400: error('Bad from or to.'),
      422: error('from is not before to, the period is longer than 366 days, or it has too many jobs.'),
      ...admin,
    },
  });
};
