import { NotFoundError } from '../errors.ts';
import { ANY_ROLE, ok, type Route } from '../route.ts';
import { applicationViews, playbooksFor } from './views.ts';

/** The catalogue routes: which playbooks a tenant may run, which applications Belay knows. */
export const CATALOG_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/playbooks',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      return ok({ playbooks: playbooksFor(req.deps.engine.playbooks, req.principal.tenantId) });
    },
  },
  {
    method: 'GET',
    path: '/playbooks/{playbookId}',
    auth: true,
    roles: ANY_ROLE,
    async handle(req) {
      const id = req.params.playbookId ?? '';
      const found = playbooksFor(req.deps.engine.playbooks, req.principal.tenantId).find((p) => p.id === id);
      // Another tenant's playbook is as unknown as one that does not exist.
      if (!found) throw new NotFoundError(`no playbook ${id} for this tenant`);
      return ok({ playbook: found });
    },
  },
  {
    method: 'GET',
    path: '/applications',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      return ok({ applications: applicationViews(req.deps.engine.applications) });
    },
  },
];
