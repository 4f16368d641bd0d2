/**
 * What `GET /playbooks` and `GET /applications` show: the playbooks a tenant may run (their
 * steps and their inputs as JSON Schema) and the target applications this deployment knows.
 * Only names, titles, schemas and URLs: never a credential or a selector.
 */
import { z } from 'zod';
import type { ApplicationEndpoint } from '../../engine/types.ts';
import type { Playbook } from '../../playbooks/contract.ts';
import { type PlaybookRegistry, tenantMayRun } from '../../playbooks/registry.ts';

export interface PlaybookStepView {
  id: string;
  title: string;
  kind: 'read' | 'write';
  app: string;
  needsApproval: boolean;
}

export interface PlaybookView {
  id: string;
  description: string;
  applications: string[];
  steps: PlaybookStepView[];
  /** The inputs as JSON Schema (draft 2020-12). */
  inputSchema: Record<string, unknown>;
  exampleInputs?: unknown;
}

/** The inputs of `playbook` as JSON Schema: the declarative form's own, else derived from zod. */
export function inputJsonSchema(playbook: Playbook): Record<string, unknown> {
  if (playbook.inputJsonSchema) return playbook.inputJsonSchema;
  try {
    return z.toJSONSchema(playbook.inputSchema, { unrepresentable: 'any', io: 'input' }) as Record<
      string,
      unknown
    >;
  } catch {
    // A schema zod cannot describe (a transform, a custom check): say only that it is an object.
    return { type: 'object' };
  }
}

/** One playbook as `GET /playbooks` lists it. */
export function playbookView(playbook: Playbook): PlaybookView {
  return {
    id: playbook.id,
    description: playbook.description,
    applications: Object.keys(playbook.applications),
    steps: playbook.steps.map((s) => ({
      id: s.id,
      title: s.title,
      kind: s.kind,
      app: s.app,
      needsApproval: s.needsApproval === true,
    })),
    inputSchema: inputJsonSchema(playbook),
    ...(playbook.exampleInputs === undefined ? {} : { exampleInputs: playbook.exampleInputs }),
  };
}

/** The playbooks `tenantId` may run. */
export function playbooksFor(registry: PlaybookRegistry, tenantId: string): PlaybookView[] {
  return registry
    .list()
    .filter((p) => tenantMayRun(p, tenantId))
    .map(playbookView);
}

/** The applications, by name, with their base URL and the further domains their pages may reach. */
export function applicationViews(
  applications: Record<string, ApplicationEndpoint>,
): { name: string; baseUrl: string; allowedDomains: string[] }[] {
  return Object.entries(applications)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, a]) => ({ name, baseUrl: a.baseUrl, allowedDomains: [...a.allowedDomains] }));
}
