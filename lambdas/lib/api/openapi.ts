import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { registerAccountPaths } from './accounts/openapi.ts';
import { registerCatalogPaths } from './catalog/openapi.ts';
import { registerCheckPaths } from './checks/openapi.ts';
import { registerConsolePaths } from './console/openapi.ts';
import { registerEvidencePaths } from './evidence/openapi.ts';
import { registerJobPaths } from './jobs/openapi.ts';
import { registerKeyPaths } from './keys/openapi.ts';
import { registerMcpPaths } from './mcp/openapi.ts';
import { registerNotificationPaths } from './notifications/openapi.ts';
import { openApiKit } from './openapi-kit.ts';
import { registerReceiptPaths } from './receipts/openapi.ts';
import { registerReportPaths } from './reports/openapi.ts';
import { registerWebhookPaths } from './webhooks/openapi.ts';

/**
 * The OpenAPI 3.1 document of the API, generated from the same zod schemas the handlers
 * validate with (each use case's `schemas.ts`), so the document cannot drift from what is enforced.
 */

function registry(): OpenAPIRegistry {
  const r = new OpenAPIRegistry();
  const kit = openApiKit(r);
  registerJobPaths(r, kit);
  registerEvidencePaths(r, kit);
  registerReceiptPaths(r, kit);
  registerAccountPaths(r, kit);
  registerCatalogPaths(r, kit);
  registerCheckPaths(r, kit);
  registerReportPaths(r, kit);
  registerKeyPaths(r, kit);
  registerNotificationPaths(r, kit);
  registerConsolePaths(r, kit);
  registerWebhookPaths(r, kit);
  registerMcpPaths(r, kit);
  r.registerPath({
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    responses: {
      200: {
        description: 'OpenAPI 3.1',
        content: { 'application/json': { schema: z.object({}).passthrough() } },
      },
    },
  });
  return r;
}

let cached: ReturnType<OpenApiGeneratorV31['generateDocument']> | undefined;
let cachedFor: string | undefined;

/** The OpenAPI 3.1 document; `baseUrl` becomes its server (omitted when empty). */
export function buildOpenApiDocument(baseUrl = ''): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  if (cached && cachedFor === baseUrl) return cached;
  const generator = new OpenApiGeneratorV31(registry().definitions);
  cached = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Belay API',
      version: '1.0.0',
      description:
        'Durable long-running browser jobs: submit jobs, follow them, approve their steps, complete their sign-ins, cancel them.',
    },
    ...(baseUrl ? { servers: [{ url: baseUrl }] } : {}),
  });
  cachedFor = baseUrl;
  return cached;
}
