/**
 * What `#belay/playbooks` is outside a bundle: a registry that knows no playbook and says why.
 * Bundles alias the specifier to the registry generated from the playbook folders
 * (`lambdas/bundling.ts`); code run from the sources gets its playbooks from `loadPlaybooks`.
 */
import { UnbundledPlaybooksError } from './errors.ts';
import type { PlaybookRegistry } from './registry.ts';

const registry: PlaybookRegistry = {
  get(): never {
    throw new UnbundledPlaybooksError();
  },
  list(): never {
    throw new UnbundledPlaybooksError();
  },
  sourceOf: () => undefined,
};

export default registry;
