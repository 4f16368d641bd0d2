import { ACCOUNT_ROUTES } from './accounts/routes.ts';
import { CATALOG_ROUTES } from './catalog/routes.ts';
import { CHECK_ROUTES } from './checks/routes.ts';
import { CONSOLE_ROUTES } from './console/routes.ts';
import { EVIDENCE_ROUTES } from './evidence/routes.ts';
import { JOB_ROUTES } from './jobs/routes.ts';
import { KEY_ROUTES } from './keys/routes.ts';
import { MCP_ROUTES } from './mcp/routes.ts';
import { NOTIFICATION_ROUTES } from './notifications/routes.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { RECEIPT_ROUTES } from './receipts/routes.ts';
import { REPORT_ROUTES } from './reports/routes.ts';
import { ANY_ROLE, baseUrlOf, ok, type Route } from './route.ts';
import { WEBHOOK_ROUTES } from './webhooks/routes.ts';

export type { Route, RouteRequest, RouteResponse } from './route.ts';

/**
 * The API's routes: each use case's list, concatenated. One table used by the handler, the
 * local server (which routes need a key) and the CDK stack (one API Gateway route per entry,
 * the authorizer where `auth`).
 */
export const ROUTES: readonly Route[] = [
  ...JOB_ROUTES,
  ...EVIDENCE_ROUTES,
  ...RECEIPT_ROUTES,
  ...WEBHOOK_ROUTES,
  ...ACCOUNT_ROUTES,
  ...CATALOG_ROUTES,
  ...CHECK_ROUTES,
  ...REPORT_ROUTES,
  ...KEY_ROUTES,
  ...NOTIFICATION_ROUTES,
  ...CONSOLE_ROUTES,
  ...MCP_ROUTES,
  {
    method: 'GET',
    path: '/openapi.json',
    auth: false,
    roles: ANY_ROLE,
    async handle(req) {
      return ok(buildOpenApiDocument(baseUrlOf(req)));
    },
  },
];
