/**
 * The docs site's structure: the README stays short, keeps the two commands of a fresh machine
 * and lost none of its former sections (each former heading is a heading of a docs page), and the
 * sidebar lists every page that must exist and an optional page only once its file exists.
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

  it('an optional page is listed only once its file exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'belay-docs-sidebar-'));
    try {
      const optional = SECTIONS.flatMap((s) => s.items).filter((p) => p.optional);
      expect(optional.map((p) => p.link)).toContain('/guides/mcp');
      const listed = (): string[] =>
        presentSections(dir, SECTIONS).flatMap((s) => s.items.map((p) => p.link));
      expect(listed()).not.toContain('/guides/mcp');
      mkdirSync(join(dir, 'guides'), { recursive: true });
      writeFileSync(join(dir, 'guides/mcp.md'), '# MCP\n');
      expect(listed()).toContain('/guides/mcp');
      expect(listed()).not.toContain('/operate/tenancy');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
