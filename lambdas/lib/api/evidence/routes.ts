import { ANY_ROLE, type Route, rawResponse } from '../route.ts';
import { readScreenshot, screenshotHeaders } from './screenshots.ts';

/** Evidence routes: a job's screenshots (masked JPEGs), after the tenant check. */
export const EVIDENCE_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/jobs/{jobId}/screenshots/{name}',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const { ref, body } = await readScreenshot(
        req.deps,
        req.principal.tenantId,
        req.params.jobId ?? '',
        req.params.name ?? '',
      );
      return rawResponse(200, ref.contentType, body, { headers: screenshotHeaders(ref) });
    },
  },
];
