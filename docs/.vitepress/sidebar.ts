/**
 * The site's navigation. Every page listed must exist (a unit test and the build's link check fail
 * on a missing one), except a page marked `optional`: it is listed only when its file exists, so a
 * page that arrives with its feature on another branch appears as soon as it is merged, and the
 * dead-link check passes before and after.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DefaultTheme } from 'vitepress';

/** One sidebar entry: its title and its page (a path under `docs/`, `/x/` for `x/index.md`). */
export interface PageEntry {
  text: string;
  link: string;
  /** Listed only when the page's file exists. */
  optional?: boolean;
}

/** A sidebar group. */
export interface Section {
  text: string;
  items: PageEntry[];
}

/** The markdown file a link names (`/guides/` -> `guides/index.md`, `/guides/mcp` -> `guides/mcp.md`). */
export function pageFile(docsDir: string, link: string): string {
  const path = link.replace(/^\//, '').replace(/#.*$/, '');
  return join(docsDir, path === '' || path.endsWith('/') ? `${path}index.md` : `${path}.md`);
}

/** The sections, with the optional pages whose file is missing left out. */
export function presentSections(docsDir: string, sections: readonly Section[]): Section[] {
  return sections.map((s) => ({
    text: s.text,
    items: s.items.filter((p) => !p.optional || existsSync(pageFile(docsDir, p.link))),
  }));
}

export const SECTIONS: readonly Section[] = [
  {
    text: 'Getting started',
    items: [
      { text: 'What Belay is', link: '/' },
      { text: 'Install and first run', link: '/getting-started/' },
      { text: 'The demo', link: '/getting-started/demo' },
      { text: 'The console', link: '/getting-started/console' },
      { text: 'The command line', link: '/getting-started/cli' },
      { text: 'Your first playbook', link: '/getting-started/first-playbook' },
      { text: 'Running the local stack', link: '/getting-started/local-stack' },
      { text: 'Status: what works', link: '/status' },
    ],
  },
  {
    text: 'Concepts',
    items: [
      { text: 'The three layers', link: '/concepts/layers' },
      { text: 'How a job runs', link: '/concepts/job-lifecycle' },
      { text: 'The guarantee', link: '/concepts/guarantee' },
      { text: 'Interruptions', link: '/concepts/interruptions' },
    ],
  },
  {
    text: 'Writing playbooks',
    items: [
      { text: 'Write a playbook', link: '/guides/' },
      { text: 'Scripted playbooks (SDK)', link: '/guides/scripted' },
      { text: 'The declarative form', link: '/guides/declarative' },
      { text: 'The rules a step lives by', link: '/guides/step-rules' },
      { text: 'Sign-in and MFA', link: '/guides/sign-in' },
      { text: 'Agent steps', link: '/guides/agent-steps' },
      { text: 'The action cache', link: '/guides/action-cache' },
      { text: "Freezing an agent's path", link: '/guides/freeze' },
      { text: 'Files between sessions', link: '/guides/files' },
      { text: 'Taking over the browser', link: '/guides/takeover' },
      { text: 'Testing a playbook', link: '/guides/testing' },
      { text: 'The chaos suite', link: '/guides/chaos' },
      { text: 'Walkthrough: an expenses portal', link: '/guides/walkthrough' },
      { text: 'Walkthrough: WordPress', link: '/guides/real-app' },
      { text: 'People in the loop', link: '/guides/people' },
      { text: 'Effects: approvals and drift checks', link: '/guides/effects' },
      { text: 'Receipts', link: '/guides/receipts' },
      { text: 'Agent runtimes over MCP', link: '/guides/mcp' },
    ],
  },
  {
    text: 'Deploying and operating',
    items: [
      { text: 'Deploying', link: '/operate/deploy' },
      { text: 'Configuration', link: '/operate/configuration' },
      { text: "Accounts through Anchor's sign-in", link: '/operate/accounts' },
      { text: 'Accounts, capacity, parking, cost', link: '/operate/capacity' },
      { text: 'Tenant boundaries', link: '/operate/tenancy' },
      { text: 'Operations', link: '/operate/' },
      { text: 'Logs, metrics and traces', link: '/operate/observability' },
      { text: 'Dashboard and alarms', link: '/operate/alarms' },
      { text: 'Runbooks', link: '/operate/runbooks' },
      { text: 'How far one account scales', link: '/operate/scale' },
      { text: 'Load simulation', link: '/operate/load-simulation' },
      { text: 'When an execution dies', link: '/operate/recovery' },
    ],
  },
  {
    text: 'Reference',
    items: [
      { text: 'HTTP API: overview', link: '/reference/http-api' },
      { text: 'HTTP API: operations', link: '/reference/api' },
      { text: 'SDK: belay/sdk', link: '/reference/sdk/' },
      { text: 'Declarative playbook schema', link: '/reference/playbook-schema' },
      { text: 'Command line', link: '/reference/cli/' },
      { text: 'Local stack options', link: '/reference/local-stack' },
      { text: 'CDK context keys', link: '/reference/cdk-context' },
      { text: 'Fault-injection control channel', link: '/reference/control-channel' },
    ],
  },
  {
    text: 'Results',
    items: [
      { text: 'Benchmark', link: '/results/benchmark' },
      { text: 'Benchmark: latest sample', link: '/results/benchmark-sample' },
      { text: 'Chaos', link: '/results/chaos' },
    ],
  },
  {
    text: 'Project',
    items: [
      { text: 'Architecture (DESIGN.md)', link: '/architecture/design' },
      { text: 'Layout of the repository', link: '/architecture/layout' },
      { text: 'Changelog', link: '/changelog' },
    ],
  },
];

/**
 * VitePress's sidebar for the sections present. Groups are not collapsible: a collapsible group's
 * header is a button around its link, which axe-core reports as nested interactive controls. The
 * SDK reference's own pages are listed on its index page.
 */
export function sidebar(docsDir: string): DefaultTheme.SidebarItem[] {
  return presentSections(docsDir, SECTIONS).map((s) => ({
    text: s.text,
    items: s.items.map((p) => ({ text: p.text, link: p.link })),
  }));
}
