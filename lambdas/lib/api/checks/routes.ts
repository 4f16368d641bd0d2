import { playbooksFor } from '../catalog/views.ts';
import { NotFoundError } from '../errors.ts';
import { ANY_ROLE, ok, type Route } from '../route.ts';
import { recentChecks } from './views.ts';

/** A playbook's health: its recent drift checks (run one with POST /jobs and mode: check). */
export const CHECK_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/playbooks/{playbookId}/checks',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const id = req.params.playbookId ?? '';
      // Another tenant's playbook is as unknown as one that does not exist.
      if (!playbooksFor(req.deps.engine.playbooks, req.principal.tenantId).some((p) => p.id === id))
        throw new NotFoundError(`no playbook ${id} for this tenant`);
      const checks = await recentChecks(req.deps.engine.ledger, req.principal.tenantId, id);
      return ok({ playbook: id, health: checks[0]?.health ?? 'unchecked', checks });
    },
  },
];
