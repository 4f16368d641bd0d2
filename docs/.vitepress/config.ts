/**
 * The documentation site (VitePress): local full-text search, Mermaid diagrams, `llms.txt` and
 * `llms-full.txt` for coding agents, and a build that fails on a dead link (VitePress's own check
 * of page links; `tools/docs/check-links.ts` then checks every link and anchor of the built HTML).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';
import llmstxt from 'vitepress-plugin-llms';
import { withMermaid } from 'vitepress-plugin-mermaid';
import { sidebar } from './sidebar.ts';

const docsDir = fileURLToPath(new URL('..', import.meta.url));

export default withMermaid(
  defineConfig({
    title: 'Belay',
    description:
      'Durable long-running browser jobs for AI coworkers: browser sessions that outlive the process, a checkpoint ledger, a state machine per job.',
    lang: 'en-US',
    // Dead links fail the build (VitePress's default, said here so that it stays so).
    ignoreDeadLinks: false,
    lastUpdated: false,
    srcExclude: ['**/README.md', '**/_*.md'],
    markdown: {
      // High-contrast code themes: the plain GitHub themes' comments miss WCAG AA's 4.5:1.
      theme: { light: 'github-light-high-contrast', dark: 'github-dark-high-contrast' },
      // Pages quote templates (`{{inputs.x}}`): inline code and text are never Vue interpolations.
      config(md) {
        const code = md.renderer.rules.code_inline;
        md.renderer.rules.code_inline = (tokens, idx, options, env, self) =>
          (code?.(tokens, idx, options, env, self) ?? '').replace(/^<code/, '<code v-pre');
        const text = md.renderer.rules.text;
        md.renderer.rules.text = (tokens, idx, options, env, self) =>
          (text?.(tokens, idx, options, env, self) ?? '').replace(/\{\{/g, '&#123;&#123;');
      },
    },
    themeConfig: {
      search: { provider: 'local' },
      outline: { level: [2, 3] },
      nav: [
        { text: 'Get started', link: '/getting-started/' },
        { text: 'Concepts', link: '/concepts/layers' },
        { text: 'Playbooks', link: '/guides/' },
        { text: 'Operate', link: '/operate/deploy' },
        { text: 'Reference', link: '/reference/http-api' },
      ],
      sidebar: sidebar(docsDir),
    },
    vite: {
      plugins: [
        llmstxt({
          description: 'Durable long-running browser jobs for AI coworkers',
        }),
      ],
    },
  }),
);
