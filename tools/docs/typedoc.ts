/**
 * The SDK reference (`belay/sdk`): TypeDoc over `lambdas/lib/playbooks/sdk.ts` with its Markdown
 * plugin and VitePress theme, so the reference is the TSDoc of the exported API, written once.
 */
import { Application } from 'typedoc';

/** Writes the SDK reference into `out` (Markdown pages; the index lists every export). */
export async function writeSdkReference(root: string, out: string): Promise<void> {
  const app = await Application.bootstrapWithPlugins({
    entryPoints: [`${root}/lambdas/lib/playbooks/sdk.ts`],
    tsconfig: `${root}/tsconfig.json`,
    plugin: ['typedoc-plugin-markdown', 'typedoc-vitepress-theme'],
    out,
    name: 'belay/sdk',
    readme: 'none',
    excludePrivate: true,
    excludeInternal: true,
    disableSources: true,
    hideGenerator: true,
    skipErrorChecking: true,
    logLevel: 'Warn',
    // Options of typedoc-plugin-markdown and typedoc-vitepress-theme.
    entryFileName: 'index',
    hidePageHeader: true,
    docsRoot: `${root}/docs`,
    sidebar: { pretty: true },
  } as Parameters<typeof Application.bootstrapWithPlugins>[0]);
  const project = await app.convert();
  if (!project) throw new Error('TypeDoc could not read belay/sdk');
  await app.generateOutputs(project);
}
