import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';

const StepView = z
  .object({
    id: z.string(),
    title: z.string(),
    kind: z.enum(['read', 'write']),
    app: z.string(),
    needsApproval: z.boolean(),
  })
  .meta({ id: 'PlaybookStep' });

const PlaybookView = z
  .object({
    id: z.string().meta({ description: 'name@version, what POST /jobs takes as playbook.' }),
    description: z.string(),
    applications: z.array(z.string()),
    steps: z.array(StepView),
    inputSchema: z.record(z.string(), z.unknown()).meta({ description: 'The inputs as JSON Schema.' }),
    exampleInputs: z.unknown().optional(),
  })
  .meta({ id: 'Playbook' });

const ApplicationView = z
  .object({ name: z.string(), baseUrl: z.string(), allowedDomains: z.array(z.string()) })
  .meta({ id: 'Application' });

/** The catalogue paths of the OpenAPI document. */
export const registerCatalogPaths: RegisterPaths = (r, { security, json, error, common }) => {
  r.registerPath({
    method: 'get',
    path: '/playbooks',
    summary: 'The playbooks your tenant may run: their steps and their inputs as JSON Schema',
    security,
    responses: { 200: json(z.object({ playbooks: z.array(PlaybookView) }), 'The playbooks.'), ...common },
  });
  r.registerPath({
    method: 'get',
    path: '/playbooks/{playbookId}',
    summary: 'One playbook your tenant may run',
    security,
    request: { params: z.object({ playbookId: z.string() }) },
    responses: {
      200: json(z.object({ playbook: PlaybookView }), 'The playbook.'),
      404: error('No such playbook for this tenant.'),
      ...common,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/applications',
    summary: 'The target applications this deployment knows (role admin)',
    security,
    responses: {
      200: json(z.object({ applications: z.array(ApplicationView) }), 'The applications.'),
      403: error('The key lacks the admin role.'),
      ...common,
    },
  });
};
