/**
 * A notes application that is none of the demo sites and is not on the engine's side: its form
 * saves in the background (a script's POST, no page load) and then redraws the list of notes on
 * the same page; the page sends requests of its own (a heartbeat POST every `heartbeatMs`);
 * the save can answer late; it de-duplicates nothing (a save sent twice is two notes); and a
 * note with the same title may already be listed from an earlier run. Also a profile whose
 * display name is set with an ordinary form post (a write that sets a value). And a transfer
 * form whose amount the site fills in itself (read-only), for writes approved on their effect.
 *
 * Pages: `/login` (Email, Password, "Log in"; "Log out" when signed in), `/notes` (Title, Text,
 * "Save note", the list as links `/notes/<id>`), `/notes/search?q=` (notes whose text holds q:
 * `found-note` rows with `data-id`, or `no-notes`), `/notes/<id>`, `/profile` (Display name,
 * "Save profile"), `/transfer` (Payee, Reference, the Amount the site sets, "Send"; a sent
 * transfer shows at `/transfers/<id>`, and `/transfers?q=` lists those whose reference holds q).
 * `GET /_records` is for tests: the notes, the saves and heartbeats received, the transfers.
 * Plain `node:http` on loopback.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Note {
  id: number;
  title: string;
  body: string;
}

export interface NotesSiteOptions {
  /** The notes page posts to `/api/heartbeat` this often, in ms (0: never; default 500). */
  heartbeatMs?: number;
  /** The save answers this long after it committed, in ms (default 0). */
  answerDelayMs?: number;
  /** The list's order (default newest first). */
  order?: 'newest' | 'oldest';
}

export interface Transfer {
  id: number;
  payee: string;
  reference: string;
  amount: string;
}

export interface NotesRecords {
  notes: Note[];
  /** `POST /api/notes` requests received (each commits a note). */
  saves: number;
  heartbeats: number;
  displayName: string;
  /** `POST /profile` requests received. */
  profileSaves: number;
  /** Every transfer sent (each `POST /transfer` makes one: nothing is de-duplicated). */
  transfers: Transfer[];
}

export interface NotesSite {
  baseUrl: string;
  records(): NotesRecords;
  /** A note made outside any job (an earlier run's record). */
  addNote(title: string, body: string): Note;
  setDisplayName(name: string): void;
  /** The amount the transfer form shows (the site's own value, not the job's). */
  setTransferAmount(amount: string): void;
  setOptions(options: NotesSiteOptions): void;
  stop(): Promise<void>;
}

const esc = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

async function bodyOf(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return new URLSearchParams(text);
}

/** Starts the site on a free loopback port, with `users` (email -> password). */
export async function startNotesSite(
  users: Record<string, string>,
  initial: NotesSiteOptions = {},
): Promise<NotesSite> {
  let options: Required<NotesSiteOptions> = { heartbeatMs: 500, answerDelayMs: 0, order: 'newest' };
  const setOptions = (o: NotesSiteOptions): void => {
    options = { ...options, ...o };
  };
  setOptions(initial);
  const sessions = new Set<string>();
  const notes: Note[] = [];
  let saves = 0;
  let heartbeats = 0;
  let displayName = '';
  let profileSaves = 0;
  let transferAmount = '100.00';
  const transfers: Transfer[] = [];

  const page = (title: string, body: string, signedIn: boolean): string =>
    `<!doctype html><html><head><title>${esc(title)}</title></head><body>${
      signedIn ? '<form method="post" action="/logout"><button>Log out</button></form>' : ''
    }<main>${body}</main>${
      signedIn && options.heartbeatMs > 0
        ? `<script>setInterval(() => fetch('/api/heartbeat', { method: 'POST', body: 'beat' }).catch(() => {}), ${options.heartbeatMs});</script>`
        : ''
    }</body></html>`;
  const send = (res: ServerResponse, status: number, html: string): void => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  };
  const redirect = (res: ServerResponse, to: string, cookie?: string): void => {
    res.writeHead(303, { location: to, ...(cookie ? { 'set-cookie': cookie } : {}) }).end();
  };
  const listed = (): string => {
    const shown = options.order === 'newest' ? [...notes].reverse() : notes;
    return shown
      .map((n) => `<li data-testid="note"><a href="/notes/${n.id}">${esc(n.title)}</a></li>`)
      .join('');
  };
  const addNote = (title: string, body: string): Note => {
    const note = { id: notes.length + 1, title, body };
    notes.push(note);
    return note;
  };
  const notesPage = (): string =>
    page(
      'Notes',
      `<h1>Notes</h1>
      <form id="new-note">
        <label>Title <input name="title"></label>
        <label>Text <textarea name="body"></textarea></label>
        <button type="submit">Save note</button>
      </form>
      <p role="status" id="saved"></p>
      <ul id="notes">${listed()}</ul>
      <script>
        document.getElementById('new-note').addEventListener('submit', async (e) => {
          e.preventDefault();
          const form = e.target;
          const answer = await fetch('/api/notes', { method: 'POST', body: new URLSearchParams(new FormData(form)) });
          if (!answer.ok) { document.getElementById('saved').textContent = 'Not saved'; return; }
          document.getElementById('saved').textContent = 'Saved';
          document.getElementById('notes').innerHTML = await (await fetch('/api/notes/list')).text();
        });
      </script>`,
      true,
    );

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (path === '/_records') {
      const records: NotesRecords = { notes, saves, heartbeats, displayName, profileSaves, transfers };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(records));
      return;
    }
    if (path === '/login' && req.method === 'GET')
      return send(
        res,
        200,
        page(
          'Sign in',
          `<h1>Sign in</h1><form method="post" action="/login">
          <label>Email <input name="email" type="email"></label>
          <label>Password <input name="password" type="password"></label>
          <button>Log in</button></form>`,
          false,
        ),
      );
    if (path === '/login' && req.method === 'POST') {
      const f = await bodyOf(req);
      const email = f.get('email') ?? '';
      if (users[email] === undefined || users[email] !== f.get('password'))
        return send(res, 200, page('Sign in', '<p role="alert">Wrong email or password</p>', false));
      const sid = randomUUID();
      sessions.add(sid);
      return redirect(res, '/notes', `sid=${sid}; Path=/; HttpOnly`);
    }
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (!sid || !sessions.has(sid)) {
      if (path.startsWith('/api/')) return void res.writeHead(401).end();
      return redirect(res, '/login');
    }
    if (path === '/logout') {
      sessions.delete(sid);
      return redirect(res, '/login');
    }
    if (path === '/api/heartbeat' && req.method === 'POST') {
      await bodyOf(req);
      heartbeats++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    if (path === '/api/notes' && req.method === 'POST') {
      const f = await bodyOf(req);
      saves++;
      const title = (f.get('title') ?? '').trim();
      if (!title) return void res.writeHead(422, { 'content-type': 'application/json' }).end('{}');
      const note = addNote(title, f.get('body') ?? '');
      if (options.answerDelayMs > 0) await new Promise((r) => setTimeout(r, options.answerDelayMs));
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: note.id }));
      return;
    }
    if (path === '/api/notes/list') return send(res, 200, listed());
    if (path === '/notes') return send(res, 200, notesPage());
    if (path === '/notes/search') {
      const q = url.searchParams.get('q') ?? '';
      const found = q ? notes.filter((n) => n.body.includes(q)) : [];
      const rows = found
        .map((n) => `<li data-testid="found-note" data-id="${n.id}">${esc(n.title)}</li>`)
        .join('');
      return send(
        res,
        200,
        page(
          'Search',
          `<h1>Search</h1><ul>${rows}</ul>${found.length === 0 ? '<p data-testid="no-notes">No notes</p>' : ''}`,
          true,
        ),
      );
    }
    const one = /^\/notes\/(\d+)$/.exec(path);
    const note = one ? notes.find((n) => n.id === Number(one[1])) : undefined;
    if (note)
      return send(res, 200, page(note.title, `<h1>${esc(note.title)}</h1><p>${esc(note.body)}</p>`, true));
    if (path === '/transfer' && req.method === 'GET')
      return send(
        res,
        200,
        page(
          'Transfer',
          `<h1>Transfer</h1><form method="post" action="/transfer">
          <label>Payee <input name="payee"></label>
          <label>Reference <input name="reference"></label>
          <label>Amount <input name="amount" value="${esc(transferAmount)}" readonly></label>
          <button>Send</button></form>`,
          true,
        ),
      );
    if (path === '/transfer' && req.method === 'POST') {
      const f = await bodyOf(req);
      const transfer = {
        id: transfers.length + 1,
        payee: f.get('payee') ?? '',
        reference: f.get('reference') ?? '',
        amount: f.get('amount') ?? '',
      };
      transfers.push(transfer);
      return redirect(res, `/transfers/${transfer.id}`);
    }
    if (path === '/transfers') {
      const q = url.searchParams.get('q') ?? '';
      const found = q ? transfers.filter((t) => t.reference.includes(q)) : [];
      return send(
        res,
        200,
        page(
          'Transfers',
          `<h1>Transfers</h1><ul>${found.map((t) => `<li data-testid="transfer" data-id="${t.id}">${esc(t.payee)}: ${esc(t.amount)}</li>`).join('')}</ul>${found.length === 0 ? '<p data-testid="no-transfers">No transfers</p>' : ''}`,
          true,
        ),
      );
    }
    const sent = /^\/transfers\/(\d+)$/.exec(path);
    const transfer = sent ? transfers.find((t) => t.id === Number(sent[1])) : undefined;
    if (transfer)
      return send(
        res,
        200,
        page(
          'Transfer sent',
          `<h1>Transfer sent</h1><p data-testid="sent" data-id="${transfer.id}" data-amount="${esc(transfer.amount)}">${esc(transfer.payee)}</p>`,
          true,
        ),
      );
    if (path === '/profile' && req.method === 'GET')
      return send(
        res,
        200,
        page(
          'Profile',
          `<h1>Profile</h1><p>Name: <span data-testid="display-name">${esc(displayName)}</span></p>
          <form method="post" action="/profile"><label>Display name <input name="name"></label>
          <button>Save profile</button></form>`,
          true,
        ),
      );
    if (path === '/profile' && req.method === 'POST') {
      const f = await bodyOf(req);
      profileSaves++;
      displayName = (f.get('name') ?? '').trim();
      return redirect(res, '/profile');
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
    records: () => structuredClone({ notes, saves, heartbeats, displayName, profileSaves, transfers }),
    addNote,
    setDisplayName: (name) => {
      displayName = name;
    },
    setTransferAmount: (amount) => {
      transferAmount = amount;
    },
    setOptions,
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
