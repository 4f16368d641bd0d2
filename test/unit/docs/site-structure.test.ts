/**
 * The docs site's structure: the README stays short, keeps the two commands of a fresh machine
 * and lost none of its former sections (each former heading is a heading of a docs page), and the
 * sidebar lists every hand-written page, every page it lists exists, and an optional page is
 * listed only once its file exists.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageFile, presentSections, SECTIONS } from '../../../docs/.vitepress/sidebar.ts';

const root = join(import.meta.dirname, '../../..');
const docs = join(root, 'docs');

function headingsOf(dir: string): Set<string> {
  const out = new Set<string>();
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== '.vitepress' && e.name !== 'public') for (const h of headingsOf(p)) out.add(h);
      continue;
    }
    if (!e.name.endsWith('.md')) continue;
    let fenced = false;
    for (const line of readFileSync(p, 'utf8').split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      const m = fenced ? null : /^#{1,6}\s+(.*?)\s*(\{#[\w-]+\})?\s*$/.exec(line);
      if (m?.[1]) out.add(m[1]);
    }
  }
  return out;
}

describe('Docs: README and site structure', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('the README is short and starts with the set-up and test commands', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    const firstLines = readme.split('\n').slice(0, 8).join('\n');
    expect(firstLines).toContain('npm run setup && npm run demo');
    expect(firstLines).toMatch(/^npm test\b/m);
  });

  it('every former heading of the README is a heading of a docs page', () => {
    const former = readFileSync(join(root, 'test/fixtures/docs/readme-former-headings.txt'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('//'));
    expect(former.length).toBeGreaterThan(30);
    const headings = headingsOf(docs);
    expect(former.filter((h) => !headings.has(h))).toEqual([]);
  });

  it('every page the sidebar must list exists', () => {
    const missing = SECTIONS.flatMap((s) => s.items)
      .filter((p) => !p.optional && !p.link.startsWith('/reference/') && !existsSync(pageFile(docs, p.link)))
      .map((p) => p.link);
    expect(missing).toEqual([]);
  });

  it('lists every hand-written page (generated references and partials aside)', () => {
    const listed = new Set(SECTIONS.flatMap((s) => s.items).map((p) => pageFile(docs, p.link)));
    const pages = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const p = join(dir, e.name);
        if (e.isDirectory()) return ['.vitepress', 'public', 'sdk', 'cli'].includes(e.name) ? [] : pages(p);
        return e.name.endsWith('.md') && !e.name.startsWith('_') ? [p] : [];
      });
    expect(pages(docs).filter((p) => !listed.has(p))).toEqual([]);
    for (const link of [
      '/guides/effects',
      '/guides/receipts',
      '/guides/mcp',
      '/guides/real-app',
      '/operate/tenancy',
      '/results/benchmark-sample',
    ])
      expect(SECTIONS.flatMap((s) => s.items).find((p) => p.link === link)?.optional).toBeUndefined();
  });

  it('an optional page is listed only once its file exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'belay-docs-sidebar-'));
    try {
      const sections = [
        {
          text: 'Guides',
          items: [
            { text: 'Here', link: '/guides/here' },
            { text: 'Arriving', link: '/guides/arriving', optional: true },
          ],
        },
      ];
      const listed = (): string[] =>
        presentSections(dir, sections).flatMap((s) => s.items.map((p) => p.link));
      expect(listed()).toEqual(['/guides/here']);
      mkdirSync(join(dir, 'guides'), { recursive: true });
      writeFileSync(join(dir, 'guides/arriving.md'), '# Arriving\n');
      expect(listed()).toEqual(['/guides/here', '/guides/arriving']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
