/**
 * The playbooks bundled into this function. `#belay/playbooks` is the registry module generated
 * at bundle time from the playbook folders (`discovery/registry-module.ts`); every bundle
 * (`lambdas/bundling.ts`: the local Lambda runner's and the CDK stack's alike) aliases it there.
 * Run from the sources, it resolves (through package.json `imports`) to `unbundled.ts`, and a
 * process that runs the engine unbundled passes its playbooks in instead (`loadPlaybooks`).
 */
import registry from '#belay/playbooks';
import type { PlaybookRegistry } from './registry.ts';

/** The registry generated for this bundle. */
export const bundledPlaybooks: PlaybookRegistry = registry;
