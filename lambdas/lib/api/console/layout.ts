import { hasRole } from '../../auth/api-keys.ts';
import { html, type SafeHtml } from './html.ts';
import type { ConsoleSession } from './sessions.ts';

/**
 * The console's page frame and its security headers: a strict Content-Security-Policy (only
 * the console's own script, style and images; no inline code, no framing, forms post only
 * here), no referrer, no sniffing, never cached.
 */

/**
 * The console's CSP; `formTargets` are origins a page's form is sent on to (browsers hold a
 * form's redirects to `form-action` as well): the hosted sign-in's, for the accounts page.
 */
export function consoleCsp(
  formTargets: readonly string[] = [],
  frameSources: readonly string[] = [],
): string {
  // Only origins (scheme, host, port): nothing a configured URL holds can add a directive.
  const originsOf = (urls: readonly string[]): string[] =>
    urls.map((t) => new URL(t).origin).filter((o) => o !== 'null' && /^https?:\/\//.test(o));
  const origins = originsOf(formTargets);
  const frames = originsOf(frameSources);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    // Only a job page that shows a takeover's live view frames anything: that view's origin.
    ...(frames.length > 0 ? [`frame-src ${frames.join(' ')}`] : []),
    ["form-action 'self'", ...origins].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export const CONSOLE_CSP = consoleCsp();

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // `same-origin`, not `no-referrer`: with no referrer Chromium sends `Origin: null` on the console's own form posts.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
});

/**
 * The console's headers for a page whose forms may be sent on to `formTargets` and that frames
 * `frameSources` (a takeover's live view) (see {@link consoleCsp}).
 */
export function consoleHeaders(
  formTargets: readonly string[] = [],
  frameSources: readonly string[] = [],
): Record<string, string> {
  return { ...CONSOLE_HEADERS, 'Content-Security-Policy': consoleCsp(formTargets, frameSources) };
}

/** The console's navigation items. */
export type ConsoleSection = 'jobs' | 'inbox' | 'accounts';

export interface PageFrame {
  title: string;
  session?: ConsoleSession;
  /** Which navigation item is the current page. */
  current?: ConsoleSection;
  /** The script reloads the page's `main` this often while nobody is typing (seconds). */
  refreshSeconds?: number;
}

/** A whole console page around `body`. */
export function consolePage(frame: PageFrame, body: SafeHtml): string {
  const { session } = frame;
  const nav = session
    ? html`<nav aria-label="Console">
        <a href="/console/jobs"${frame.current === 'jobs' ? html` aria-current="page"` : ''}>Jobs</a>
        <a href="/console/inbox"${frame.current === 'inbox' ? html` aria-current="page"` : ''}>Inbox</a>
        ${
          hasRole(session.principal, 'admin')
            ? html`<a href="/console/accounts"${frame.current === 'accounts' ? html` aria-current="page"` : ''}>Accounts</a>`
            : ''
        }
        <span class="who">Signed in as <code>${session.principal.keyId}</code> (${session.principal.roles.join(', ')}) of tenant <code>${session.principal.tenantId}</code></span>
        <form method="post" action="/console/sign-out" class="inline">
          <input type="hidden" name="csrf" value="${session.csrf}">
          <button type="submit">Sign out</button>
        </form>
      </nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Belay console</title>
<link rel="stylesheet" href="/console/assets/console.css">
${session ? html`<meta name="belay-csrf" content="${session.csrf}">` : ''}
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<header><a class="brand" href="/console/jobs">Belay</a>${nav}</header>
<main id="main"${frame.refreshSeconds ? html` data-refresh="${frame.refreshSeconds}"` : ''}>
${body}
</main>
<div id="status" role="status" aria-live="polite"></div>
</body>
</html>`.value;
}
