/**
 * Server-rendered HTML for the demo sites: escaping, the page shell, form fields, and the two
 * page layouts. The `changed` layout keeps every function but moves things and renames every
 * test hook (`data-testid` -> `data-qa="v2-..."`), as a redesign of a real site would.
 */

import { BUSY_REQUESTS } from './faults.ts';

export type Layout = 'classic' | 'changed';

export interface SiteInfo {
  /** `shop`, `crm` or `billing`. */
  name: string;
  /** The brand shown in the header. */
  title: string;
  /** Accent colour of the brand. */
  accent: string;
}

export interface NavLink {
  href: string;
  label: string;
  testid: string;
}

/** Everything the shell needs to render a page for one request. */
export interface PageContext {
  site: SiteInfo;
  layout: Layout;
  user?: { displayName: string };
  nav: NavLink[];
  /** Extra header content (the shop's search box). */
  headerExtra?: string;
  /** The page sends requests of its own as a form is submitted (`FaultFlags.busyPages`). */
  busy?: boolean;
}

/** Escapes text for HTML content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The test hook attribute of an element, which differs between layouts. */
export function tid(pc: PageContext, name: string): string {
  return pc.layout === 'classic' ? `data-testid="${esc(name)}"` : `data-qa="v2-${esc(name)}"`;
}

/** Pick the classic or the changed variant of a piece of markup or wording. */
export function byLayout(pc: PageContext, classic: string, changed: string): string {
  return pc.layout === 'classic' ? classic : changed;
}

/** Pence as pounds (`1234` -> `£12.34`). */
export function money(pence: number): string {
  const sign = pence < 0 ? '−' : '';
  return `${sign}£${(Math.abs(pence) / 100).toFixed(2)}`;
}

/** The recognisable error element: `role="alert"` in both layouts. */
export function errorBox(pc: PageContext, errors: readonly string[]): string {
  if (errors.length === 0) return '';
  const items = errors.map((e) => `<li>${esc(e)}</li>`).join('');
  return byLayout(
    pc,
    `<div class="error" role="alert" ${tid(pc, 'error')}><p class="error-title">There is a problem</p><ul>${items}</ul></div>`,
    `<div class="v2-alert" role="alert" ${tid(pc, 'error')}><strong>Please check:</strong><ul>${items}</ul></div>`,
  );
}

/** A success notice (`role="status"`). */
export function noticeBox(pc: PageContext, message: string | undefined): string {
  if (!message) return '';
  return `<div class="${byLayout(pc, 'notice', 'v2-toast')}" role="status" ${tid(pc, 'notice')}>${esc(message)}</div>`;
}

export interface FieldOptions {
  name: string;
  label: string;
  value?: string;
  type?: string;
  error?: string;
  hint?: string;
  autocomplete?: string;
  inputmode?: string;
  /** Defaults to the field name. */
  testid?: string;
  width?: 'short' | 'full';
}

/** A labelled input with its error message. */
export function field(pc: PageContext, o: FieldOptions): string {
  const id = `${pc.layout === 'classic' ? 'f' : 'v2f'}-${o.name}`;
  const attrs = [
    `id="${id}"`,
    `name="${esc(o.name)}"`,
    `type="${esc(o.type ?? 'text')}"`,
    `value="${esc(o.value ?? '')}"`,
    tid(pc, o.testid ?? o.name),
    o.autocomplete ? `autocomplete="${esc(o.autocomplete)}"` : '',
    o.inputmode ? `inputmode="${esc(o.inputmode)}"` : '',
    o.error ? 'aria-invalid="true"' : '',
    o.width === 'short' ? 'class="short"' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const err = o.error ? `<span class="field-error">${esc(o.error)}</span>` : '';
  const hint = o.hint ? `<span class="hint">${esc(o.hint)}</span>` : '';
  return byLayout(
    pc,
    `<div class="field${o.error ? ' has-error' : ''}"><label for="${id}">${esc(o.label)}</label>${hint}${err}<input ${attrs}></div>`,
    `<p class="v2-row"><input ${attrs} placeholder="${esc(o.label)}"><label for="${id}">${esc(o.label)}</label>${err}</p>`,
  );
}

export interface SelectOptions {
  name: string;
  label: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  value?: string;
  error?: string;
  testid?: string;
}

/** A labelled select. */
export function selectField(pc: PageContext, o: SelectOptions): string {
  const id = `${pc.layout === 'classic' ? 'f' : 'v2f'}-${o.name}`;
  const opts = [`<option value="">Choose…</option>`]
    .concat(
      o.options.map(
        (opt) =>
          `<option value="${esc(opt.value)}"${opt.value === o.value ? ' selected' : ''}>${esc(opt.label)}</option>`,
      ),
    )
    .join('');
  const err = o.error ? `<span class="field-error">${esc(o.error)}</span>` : '';
  return `<div class="field${o.error ? ' has-error' : ''}"><label for="${id}">${esc(o.label)}</label>${err}<select id="${id}" name="${esc(o.name)}" ${tid(pc, o.testid ?? o.name)}>${opts}</select></div>`;
}

/** A submit button whose wording changes with the layout. */
export function submitButton(
  pc: PageContext,
  testid: string,
  classic: string,
  changed: string = classic,
  secondary = false,
): string {
  const cls = `${byLayout(pc, 'btn', 'v2-btn')}${secondary ? ' secondary' : ''}`;
  return `<button type="submit" class="${cls}" ${tid(pc, testid)}>${esc(byLayout(pc, classic, changed))}</button>`;
}

/** A hidden input. */
export function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`;
}

export interface PageOptions {
  title: string;
  main: string;
  /** Extra class on `<main>` (page identity for CSS). */
  page?: string;
}

/** A busy page's own requests as a form is submitted, each answered a little later than the one before. */
const BUSY_SCRIPT = `<script>document.addEventListener('submit',()=>{for(let i=1;i<=${BUSY_REQUESTS};i++)fetch('/__busy?ms='+10*i,{cache:'no-store'}).catch(()=>{})},true)</script>`;

/** The whole document: head, header (or side bar in the changed layout), main content. */
export function renderPage(pc: PageContext, o: PageOptions): string {
  const account = pc.user
    ? `<span class="account" ${tid(pc, 'account-name')}>Signed in as ${esc(pc.user.displayName)}</span>
       <form method="post" action="/signout" class="inline"><button type="submit" class="link" ${tid(pc, 'signout')}>Sign out</button></form>`
    : `<a href="/signin" ${tid(pc, 'signin-link')}>Sign in</a>`;
  const nav = pc.nav.map((l) => `<a href="${esc(l.href)}" ${tid(pc, l.testid)}>${esc(l.label)}</a>`).join('');
  const brand = `<a class="brand" href="/" ${tid(pc, 'brand')}>${esc(pc.site.title)}</a>`;
  const chrome = byLayout(
    pc,
    `<header class="top">${brand}<nav>${nav}</nav>${pc.headerExtra ?? ''}<div class="who">${account}</div></header>
     <main class="${esc(o.page ?? '')}" ${tid(pc, `page-${o.page ?? 'page'}`)}>${o.main}</main>`,
    `<div class="v2-shell"><aside class="v2-side">${brand}<div class="v2-who">${account}</div>${pc.headerExtra ?? ''}<nav class="v2-nav">${nav}</nav></aside>
     <section class="v2-main ${esc(o.page ?? '')}" ${tid(pc, `page-${o.page ?? 'page'}`)}>${o.main}</section></div>`,
  );
  return `<!doctype html>
<html lang="en-GB"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="belay-demo-app" content="${esc(pc.site.name)}">
<title>${esc(o.title)} · ${esc(pc.site.title)}</title><style>${css(pc)}</style></head>
<body class="${pc.layout}">${chrome}${pc.busy ? BUSY_SCRIPT : ''}</body></html>`;
}

function css(pc: PageContext): string {
  return `
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d232a;background:#f6f7f9}
a{color:${pc.site.accent}}h1{font-size:1.6rem;margin:.2rem 0 1rem}h2{font-size:1.2rem;margin:1.2rem 0 .6rem}
header.top{display:flex;gap:1.2rem;align-items:center;flex-wrap:wrap;padding:.7rem 1.5rem;background:#fff;border-bottom:3px solid ${pc.site.accent}}
.brand{font-weight:700;font-size:1.2rem;text-decoration:none;color:${pc.site.accent}}
nav{display:flex;gap:1rem}.who{margin-left:auto;display:flex;gap:.6rem;align-items:center;color:#555}
main{max-width:980px;margin:1.5rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
.inline{display:inline}button.link{background:none;border:0;color:${pc.site.accent};cursor:pointer;font:inherit;text-decoration:underline;padding:0}
.btn,.v2-btn{background:${pc.site.accent};color:#fff;border:0;border-radius:6px;padding:.6rem 1.1rem;font:inherit;font-weight:600;cursor:pointer}
.btn.secondary,.v2-btn.secondary{background:#e7e9ee;color:#1d232a}a.btn,a.v2-btn{display:inline-block;text-decoration:none}
form.search{display:flex;gap:.4rem}form.search input{font:inherit;padding:.45rem .6rem;border:1px solid #9aa3ad;border-radius:5px;min-width:14rem}
input[type=number].short{width:4.5rem;font:inherit;padding:.3rem .4rem}.actions{display:flex;gap:.6rem;margin-top:1rem}
.v2-side button.link{color:#9cf}.v2-side form.search{flex-direction:column}.v2-side form.search input{min-width:0}
.field{display:flex;flex-direction:column;margin:0 0 .9rem;max-width:28rem}.field label{font-weight:600}
.field input,.field select,.v2-row input{font:inherit;padding:.5rem .6rem;border:1px solid #9aa3ad;border-radius:5px}
.field input.short{max-width:9rem}.has-error input,.has-error select{border:2px solid #c62828}
.field-error{color:#c62828;font-weight:600}.hint{color:#666;font-size:.9rem}
.error{border:3px solid #c62828;background:#fff5f5;padding:.6rem 1rem;margin:0 0 1rem;border-radius:6px}.error-title{font-weight:700;margin:0}
.error ul{margin:.3rem 0 0 1.1rem;padding:0;color:#c62828}
.notice{border-left:5px solid #2e7d32;background:#f1f8f2;padding:.6rem 1rem;margin:0 0 1rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.5rem;border-bottom:1px solid #e2e5ea;vertical-align:top}
td.num,th.num{text-align:right}.muted{color:#666}.tag{display:inline-block;background:#eef;border-radius:4px;padding:0 .4rem;font-size:.85rem}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:1rem}
.card{border:1px solid #e2e5ea;border-radius:8px;padding:1rem;background:#fff}
.totals td{border:0;padding:.2rem .5rem}.totals tr.total td{font-weight:700;font-size:1.1rem;border-top:2px solid #1d232a}
.steps{display:flex;gap:.4rem;list-style:none;padding:0;margin:0 0 1rem;color:#666;flex-wrap:wrap}.steps li.on{color:#1d232a;font-weight:700}
.steps li+li:before{content:"›";margin-right:.4rem;color:#999}
fieldset{border:1px solid #e2e5ea;border-radius:6px;margin:0 0 1rem;padding:.6rem 1rem}
.choice{display:flex;gap:.6rem;align-items:center;padding:.3rem 0}
dl.kv{display:grid;grid-template-columns:12rem 1fr;gap:.3rem 1rem}dl.kv dt{font-weight:600;color:#444}dl.kv dd{margin:0}
body.changed{background:#20242b}.v2-shell{display:flex;min-height:100vh}
.v2-side{width:15rem;background:#2b3038;color:#dde;padding:1rem;display:flex;flex-direction:column;gap:.8rem}
.v2-side a{color:#9cf}.v2-nav{display:flex;flex-direction:column;gap:.4rem}.v2-who{font-size:.9rem}
.v2-main{flex:1;background:#fbfbfd;padding:1.5rem 2rem}.v2-row{display:flex;flex-direction:column-reverse;margin:0 0 .8rem;max-width:26rem}
.v2-alert{background:#ffe9e9;border-left:6px solid #b00;padding:.6rem 1rem;margin-bottom:1rem}.v2-toast{background:#e6f6e6;padding:.5rem 1rem}
`;
}
