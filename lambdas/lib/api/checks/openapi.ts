import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';

const CheckedStep = z
  .object({
    step: z.string(),
    result: z.string().meta({
      description:
        'ok, skipped (it reads the evidence of a write the check did not make), or what ended the check: layout-changed, not-verified, signed-out, failed',
    }),
    ms: z.number().optional(),
    detail: z.string().optional(),
    slower: z.object({ ms: z.number(), medianMs: z.number() }).optional().meta({
      description:
        "Slower than usual: over twice the step's median in the older checks shown, by a second or more.",
    }),
    screenshot: z
      .string()
      .optional()
      .meta({ description: 'The page where the check ended (a path of this API).' }),
  })
  .meta({ id: 'CheckedStep' });

const Check = z
  .object({
    jobId: z.string(),
    status: z.string(),
    createdAt: z.string(),
    finishedAt: z.string().optional(),
    health: z.enum(['ok', 'red', 'running']),
    steps: z.array(CheckedStep),
  })
  .meta({ id: 'Check' });

/** The drift-check paths of the OpenAPI document. */
export const registerCheckPaths: RegisterPaths = (r, { security, json, error, common }) => {
  r.registerPath({
    method: 'get',
    path: '/playbooks/{playbookId}/checks',
    summary: "A playbook's health: its recent drift checks (start one with POST /jobs and mode: check)",
    security,
    request: { params: z.object({ playbookId: z.string() }) },
    responses: {
      200: json(
        z.object({
          playbook: z.string(),
          health: z.enum(['ok', 'red', 'running', 'unchecked']),
          checks: z.array(Check).meta({ description: 'Newest first, at most 10.' }),
        }),
        'The checks.',
      ),
      404: error('No such playbook for this tenant.'),
      ...common,
    },
  });
};
