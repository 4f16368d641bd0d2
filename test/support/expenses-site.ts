/**
 * An expenses portal that is none of the demo sites, for tests of playbooks written outside the
 * repository: a form sign-in (Email, Password, "Log in"; "Log out" when signed in), reports made
 * from a form that takes an idempotency key in a hidden field, lines added to a report the same
 * way, and a records endpoint (`GET /_records`) a test reads. Plain `node:http` on loopback.
 *
 * `dedupe: false` makes it a site that de-duplicates nothing (a resent form makes a second
 * report), as the chaos suite's sites can be.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ExpenseLine {
  key: string;
  description: string;
  amount: string;
}
export interface ExpenseReport {
  id: string;
  key: string;
  title: string;
  lines: ExpenseLine[];
}

export interface ExpensesSite {
  baseUrl: string;
  /** What the site holds, as `GET /_records` returns it. */
  reports(): ExpenseReport[];
  /** Ends every session (the next page asks to sign in again). */
  expireSessions(): void;
  stop(): Promise<void>;
}

const esc = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const page = (title: string, body: string, signedIn: boolean): string =>
  `<!doctype html><html><head><title>${esc(title)}</title></head><body>${
    signedIn ? '<form method="post" action="/logout"><button>Log out</button></form>' : ''
  }<main>${body}</main></body></html>`;

async function form(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return new URLSearchParams(text);
}

/** Starts the site on a free loopback port, with `users` (email -> password). */
export async function startExpensesSite(
  users: Record<string, string>,
  options: { dedupe?: boolean } = {},
): Promise<ExpensesSite> {
  const dedupe = options.dedupe ?? true;
  const sessions = new Set<string>();
  const reports: ExpenseReport[] = [];

  const send = (res: ServerResponse, status: number, html: string): void => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  };
  const redirect = (res: ServerResponse, to: string, cookie?: string): void => {
    res.writeHead(303, { location: to, ...(cookie ? { 'set-cookie': cookie } : {}) }).end();
  };
  const sessionOf = (req: IncomingMessage): string | undefined =>
    /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];

  const loginPage = (error?: string): string =>
    page(
      'Sign in',
      `<h1>Sign in</h1>${error ? `<p role="alert">${esc(error)}</p>` : ''}<form method="post" action="/login">
      <label>Email <input name="email" type="email"></label>
      <label>Password <input name="password" type="password"></label>
      <button>Log in</button></form>`,
      false,
    );

  const reportPage = (r: ExpenseReport): string =>
    page(
      r.title,
      `<h1 data-testid="report-title">${esc(r.title)}</h1>
      <div data-testid="report" data-id="${esc(r.id)}" data-key="${esc(r.key)}">
      <ul>${r.lines
        .map(
          (l) =>
            `<li data-testid="line" data-key="${esc(l.key)}" data-amount="${esc(l.amount)}">${esc(l.description)}: ${esc(l.amount)}</li>`,
        )
        .join('')}</ul>${r.lines.length === 0 ? '<p data-testid="no-lines">No lines yet</p>' : ''}</div>
      <form method="post" action="/reports/${esc(r.id)}/lines">
      <label>Description <input name="description"></label>
      <label>Amount <input name="amount"></label>
      <input type="hidden" name="key">
      <button>Add line</button></form>`,
      true,
    );

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (path === '/_records') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reports }));
      return;
    }
    if (path === '/login' && req.method === 'GET') return send(res, 200, loginPage());
    if (path === '/login' && req.method === 'POST') {
      const f = await form(req);
      const email = f.get('email') ?? '';
      if (users[email] === undefined || users[email] !== f.get('password'))
        return send(res, 200, loginPage('Wrong email or password'));
      const sid = randomUUID();
      sessions.add(sid);
      return redirect(res, '/reports', `sid=${sid}; Path=/; HttpOnly`);
    }
    const sid = sessionOf(req);
    if (!sid || !sessions.has(sid)) return redirect(res, '/login');
    if (path === '/logout') {
      sessions.delete(sid);
      return redirect(res, '/login');
    }
    if (path === '/reports' && req.method === 'GET') {
      const key = url.searchParams.get('key');
      const shown = key === null ? reports : reports.filter((r) => r.key === key);
      const rows = shown
        .map(
          (r) =>
            `<li data-testid="report" data-id="${esc(r.id)}" data-key="${esc(r.key)}"><a href="/reports/${esc(r.id)}">${esc(r.title)}</a></li>`,
        )
        .join('');
      return send(
        res,
        200,
        page(
          'Reports',
          `<h1>Reports</h1><a href="/reports/new">New report</a><ul>${rows}</ul>${
            shown.length === 0 ? '<p data-testid="no-reports">No reports</p>' : ''
          }`,
          true,
        ),
      );
    }
    if (path === '/reports/new' && req.method === 'GET')
      return send(
        res,
        200,
        page(
          'New report',
          `<h1>New report</h1><form method="post" action="/reports">
          <label>Title <input name="title"></label>
          <input type="hidden" name="key">
          <button>Create report</button></form>`,
          true,
        ),
      );
    if (path === '/reports' && req.method === 'POST') {
      const f = await form(req);
      const title = (f.get('title') ?? '').trim();
      const key = f.get('key') ?? '';
      if (!title)
        return send(res, 200, page('New report', '<p role="alert">A report needs a title</p>', true));
      const existing = dedupe && key ? reports.find((r) => r.key === key) : undefined;
      if (existing) return redirect(res, `/reports/${existing.id}`);
      const report = { id: `r${reports.length + 1}`, key, title, lines: [] };
      reports.push(report);
      return redirect(res, `/reports/${report.id}`);
    }
    const one = /^\/reports\/(r\d+)(\/lines)?$/.exec(path);
    const report = one ? reports.find((r) => r.id === one[1]) : undefined;
    if (one && !report) return send(res, 404, page('Not found', '<p role="alert">No such report</p>', true));
    if (report && !one?.[2] && req.method === 'GET') return send(res, 200, reportPage(report));
    if (report && one?.[2] && req.method === 'POST') {
      const f = await form(req);
      const line = {
        key: f.get('key') ?? '',
        description: f.get('description') ?? '',
        amount: f.get('amount') ?? '',
      };
      if (!/^\d+(\.\d\d)?$/.test(line.amount))
        return send(res, 200, page(report.title, '<p role="alert">The amount is not a number</p>', true));
      if (!(dedupe && line.key && report.lines.some((l) => l.key === line.key))) report.lines.push(line);
      return redirect(res, `/reports/${report.id}`);
    }
    send(res, 404, page('Not found', '<p role="alert">Not found</p>', true));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    reports: () => structuredClone(reports),
    expireSessions: () => sessions.clear(),
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
