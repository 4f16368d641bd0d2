/**
 * Registers `resolve-hooks.mjs` in this process, once: afterwards a playbook outside the
 * repository loads under tsx with its `belay/sdk`, `zod` and `playwright-core` imports resolved
 * from Belay's tree. `npm start`, `npm run playbook`, the chaos suite and `cdk synth` call it
 * before loading playbooks; a bundle needs none of it (the bundler aliases those imports).
 */
import { register } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './repo.ts';

let registered = false;

/** Lets files outside the repository import `belay/sdk` (and Belay's `zod`, `playwright-core`). */
export function registerSdkResolution(): void {
  if (registered) return;
  registered = true;
  register(new URL('./resolve-hooks.mjs', import.meta.url), {
    data: {
      rootPackage: pathToFileURL(join(REPO_ROOT, 'package.json')).href,
      rootDir: pathToFileURL(`${REPO_ROOT}/`).href,
    },
  });
}
