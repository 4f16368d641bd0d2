/**
 * Node module hooks (`module.register`) that let a playbook folder anywhere on disk import
 * `belay/sdk`, `zod` and `playwright-core` from Belay's own tree, with nothing installed there:
 *
 * - a bare import that does not resolve from the importing file is resolved again as if from the
 *   repository root (which holds `node_modules`, and `belay/sdk` as the package's own export);
 * - TypeScript files outside the repository load as ES modules (a folder with no package.json
 *   would otherwise make them CommonJS, where these hooks never run).
 *
 * Plain JavaScript: hooks run on the loader thread, before any TypeScript loader is there.
 */

/** @type {string} */
let rootPackage = '';
/** @type {string} */
let rootDir = '';

/** @param {{ rootPackage: string; rootDir: string }} data */
export function initialize(data) {
  rootPackage = data.rootPackage;
  rootDir = data.rootDir;
}

const BARE = /^(?![./#]|[a-zA-Z][a-zA-Z0-9+.-]*:)/;

/**
 * @param {string} specifier
 * @param {{ parentURL?: string; conditions?: string[]; importAttributes?: object }} context
 * @param {(specifier: string, context?: object) => Promise<{ url: string; format?: string | null }>} next
 */
export async function resolve(specifier, context, next) {
  let result;
  try {
    result = await next(specifier, context);
  } catch (err) {
    const code = /** @type {{ code?: string }} */ (err)?.code;
    const outside = context.parentURL?.startsWith('file:') && !context.parentURL.startsWith(rootDir);
    if (!outside || !BARE.test(specifier)) throw err;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw err;
    return next(specifier, { ...context, parentURL: rootPackage });
  }
  if (
    result.url.startsWith('file:') &&
    !result.url.startsWith(rootDir) &&
    !result.url.includes('/node_modules/') &&
    /\.(m?ts|tsx)$/.test(result.url)
  ) {
    return { ...result, format: 'module' };
  }
  return result;
}
