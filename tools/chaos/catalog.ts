/**
 * What the chaos suite knows of a playbook: its steps (id, application, kind, approval), found
 * as the stack finds them (`loadPlaybooks` over the same folders), never from a fixed list.
 */
import type { PlaybookRegistry } from '../../lambdas/lib/playbooks/registry.ts';

/** One step as the plan and the job drivers need it. */
export interface StepInfo {
  id: string;
  app: string;
  kind: 'read' | 'write';
  needsApproval: boolean;
}

/** The steps of each playbook a run may use. */
export interface PlaybookCatalog {
  steps(playbookId: string): StepInfo[];
}

/** The catalog of a registry's playbooks. */
export function catalogOf(registry: PlaybookRegistry): PlaybookCatalog {
  return {
    steps: (id) =>
      registry.get(id).steps.map((s) => ({
        id: s.id,
        app: s.app,
        kind: s.kind,
        needsApproval: s.needsApproval === true,
      })),
  };
}
