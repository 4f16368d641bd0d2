import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';

/** The evidence paths of the OpenAPI document. */
export const registerEvidencePaths: RegisterPaths = (r, { security, error, common }) => {
  r.registerPath({
    method: 'get',
    path: '/jobs/{jobId}/screenshots/{name}',
    summary: "A screenshot of the job's page (masked JPEG)",
    description:
      "The name is the last part of a ledger entry's `screenshot.key` (the entry's `screenshot.url` links here). Password, card and one-time-code fields and the playbook's sensitive elements are masked.",
    security,
    request: {
      params: z.object({
        jobId: z.string().meta({ description: 'The job id.' }),
        name: z.string().meta({ description: 'The screenshot name, from the ledger entry.' }),
      }),
    },
    responses: {
      200: {
        description: 'The JPEG.',
        content: { 'image/jpeg': { schema: z.string().meta({ format: 'binary' }) } },
      },
      404: error("No such job or screenshot for this tenant (another tenant's reads the same)."),
      ...common,
    },
  });
};
