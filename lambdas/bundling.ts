/**
 * How a handler is bundled, shared by the stack (`BelayFunction`, through CDK's
 * NodejsFunction) and the local Lambda runner, so a function runs locally from the same
 * kind of bundle it is deployed as. Plain data beside the handlers it describes: the local stack never imports `cdk/`.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the esbuild project root of every function), resolved from this file. */
const REPO_ROOT: string = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * Prepended to every ESM bundle: CommonJS dependencies bundled into ESM call `require`
 * (for Node built-ins and externals), which ESM lacks. The alias keeps the banner clear of
 * names a bundled module may declare; esbuild renames a bundled `require` itself.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __belayCreateRequire } from 'node:module';" +
  'const require = __belayCreateRequire(import.meta.url);';

/**
 * Import paths replaced in every bundle. `playwright` (imported by the `anchorbrowser` SDK for
 * helpers Belay does not call) becomes a stand-in that loads playwright-core on first use: an
 * external import stays a static import at the top of an ESM bundle, so without this every
 * function would load playwright-core (about 0.3 s) at cold start.
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  playwright: join(REPO_ROOT, 'lambdas', 'lib', 'browser', 'playwright-lazy.ts'),
});

/** The playbook SDK's public index: what `belay/sdk` means in a playbook, inside the repository or not. */
export const SDK_ENTRY: string = join(REPO_ROOT, 'lambdas', 'lib', 'playbooks', 'sdk.ts');

/** The import path of the registry module generated from the playbook folders (`lambdas/lib/playbooks/bundled.ts`). */
export const PLAYBOOKS_SPECIFIER = '#belay/playbooks';

/**
 * The aliases of a handler's bundle: {@link BUNDLE_ALIASES}, `belay/sdk` (a playbook folder
 * outside the repository has no package to resolve it from) and `#belay/playbooks`, the
 * registry module generated for this deployment's playbooks (`writeRegistryModule`).
 *
 * @param playbookRegistry absolute path of the generated registry module
 */
export function bundleAliases(playbookRegistry: string): Record<string, string> {
  return { ...BUNDLE_ALIASES, 'belay/sdk': SDK_ENTRY, [PLAYBOOKS_SPECIFIER]: playbookRegistry };
}

/**
 * Where a bare import in a file outside the repository (a playbook folder's `zod`,
 * `playwright-core`) resolves when the file's own folders have no `node_modules`: Belay's own.
 * esbuild's `nodePaths`, or `NODE_PATH` for the esbuild command line (CDK).
 */
export const BUNDLE_NODE_PATHS: readonly string[] = Object.freeze([join(REPO_ROOT, 'node_modules')]);

/** Left out of every bundle: the Lambda runtime provides the AWS SDK v3. */
export const PROVIDED_MODULES: readonly string[] = Object.freeze(['@aws-sdk/*']);

/**
 * `runtimeModules` for a handler that drives a browser. playwright-core (1.65) ships as a
 * prebuilt bundle that reads its own `package.json` through `__dirname` at load time, so
 * bundled into a handler it fails on import; shipped as files it loads as published.
 * It has no dependencies, and electron/chromium-bidi are not required at runtime.
 */
export const PLAYWRIGHT_RUNTIME_MODULES: readonly string[] = Object.freeze(['playwright-core']);
