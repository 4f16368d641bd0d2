/**
 * `tsx tools/docs/check-links.ts <dist>`: every link of the built site leads somewhere. VitePress
 * fails its build on a link to a missing page; this also checks what it does not: each anchor
 * (`/guides/agent-steps.html#models`) names an id on its page, and the sidebar's and the
 * generated pages' links resolve. Exit status 1 with every dead link listed.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, posix, relative } from 'node:path';

/** A dead link: the page it is on and where it points. */
export interface DeadLink {
  page: string;
  href: string;
  why: 'no such page' | 'no such anchor';
}

/** Every file of the built site, by its path in it (`guides/index.html`, `openapi.json`). */
export async function siteFiles(dist: string): Promise<string[]> {
  return (await readdir(dist, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(dist, join(e.parentPath, e.name)).split('\\').join('/'));
}

/** The built site's pages: path (`guides/index.html`) -> its HTML. */
export async function readSite(dist: string, listed?: readonly string[]): Promise<Map<string, string>> {
  const pages = new Map<string, string>();
  for (const path of listed ?? (await siteFiles(dist)))
    if (path.endsWith('.html')) pages.set(path, await readFile(join(dist, path), 'utf8'));
  return pages;
}

const HREF = /<a\b[^>]*?\shref="([^"]*)"/g;
const ID = /\sid="([^"]+)"/g;

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/&amp;/g, '&'));
  } catch {
    return s;
  }
}

/** The page a site path names: `/x/` -> `x/index.html`, `/x` and `/x.html` -> `x.html`. */
function pageOf(pages: Map<string, string>, path: string): string | undefined {
  const p = path.replace(/^\//, '');
  const candidates = p === '' || p.endsWith('/') ? [`${p}index.html`] : [p, `${p}.html`, `${p}/index.html`];
  return candidates.find((c) => pages.has(c));
}

/**
 * Every dead link of the site: pages that do not exist, anchors their page lacks. Links out of
 * the site (another scheme or host) and to files that are not pages (`/openapi.json`, assets)
 * are checked for existence only when `files` lists them.
 */
export function deadLinks(pages: Map<string, string>, files: ReadonlySet<string> = new Set()): DeadLink[] {
  const ids = new Map<string, Set<string>>();
  for (const [page, html] of pages)
    ids.set(page, new Set([...html.matchAll(ID)].map((m) => decode(m[1] ?? ''))));
  const dead: DeadLink[] = [];
  for (const [page, html] of pages) {
    for (const m of html.matchAll(HREF)) {
      const href = m[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue;
      const [rawPath = '', rawHash] = href.split('#');
      const path = rawPath === '' ? `/${page}` : posix.resolve(`/${posix.dirname(page)}`, rawPath);
      if (/\.[a-z0-9]+$/i.test(path) && !path.endsWith('.html')) {
        if (!files.has(path.replace(/^\//, ''))) dead.push({ page, href, why: 'no such page' });
        continue;
      }
      const target = pageOf(pages, path);
      if (!target) {
        dead.push({ page, href, why: 'no such page' });
        continue;
      }
      if (rawHash && !ids.get(target)?.has(decode(rawHash))) dead.push({ page, href, why: 'no such anchor' });
    }
  }
  return dead;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dist = process.argv[2] ?? 'docs/.vitepress/dist';
  const listed = await siteFiles(dist);
  const pages = await readSite(dist, listed);
  const dead = deadLinks(pages, new Set(listed));
  for (const d of dead) console.error(`dead link on ${d.page}: ${d.href} (${d.why})`);
  console.log(`${pages.size} pages checked, ${dead.length} dead links`);
  process.exitCode = dead.length > 0 ? 1 : 0;
}
