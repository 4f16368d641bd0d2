/**
 * Sign-in, shared by the three demo sites: password, then (per account) nothing, a TOTP
 * authenticator code, or a code "sent by SMS" (written to the site's outbox). Sessions are
 * server-side records behind an HttpOnly cookie named `<site>_sid` (the sites share the host
 * 127.0.0.1, and cookies do not separate ports, so each site has its own cookie name).
 */
import { randomInt } from 'node:crypto';
import { verify as verifyTotp } from 'otplib';
import type { DemoAccount } from '../../accounts.ts';
import { errorBox, esc, field, hidden, noticeBox, renderPage, submitButton, tid } from './html.ts';
import type { Router, SiteRequest, SiteResponse } from './router.ts';
import { html, redirect } from './router.ts';
import type { SessionRecord, SiteRuntime } from './runtime.ts';
import { randomId, safeNext } from './runtime.ts';

const CODE_TTL_MS = 10 * 60_000;
const MAX_FAILED_CODES = 5;
const COOKIE_MAX_AGE_S = 7 * 24 * 3600;

function sessionCookie(name: string, id: string): string {
  return `${name}=${id}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${COOKIE_MAX_AGE_S}`;
}

function clearCookie(name: string): string {
  return `${name}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`;
}

function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return `•••• ${digits.slice(-4)}`;
}

/** Registers `/signin`, `/signin/code` and `/signout`. */
export function registerAuthRoutes<D>(router: Router, rt: SiteRuntime<D>): void {
  const signInPage = (req: SiteRequest, errors: string[], username = '', status = 200): SiteResponse => {
    const pc = rt.page(req);
    const next = safeNext(req.form.get('next') ?? req.query.get('next'), rt.def.homePath);
    const notice = req.query.get('reason') === 'locked' ? 'Too many wrong codes. Sign in again.' : undefined;
    const main = `<h1>Sign in to ${esc(rt.def.info.title)}</h1>${noticeBox(pc, notice)}${errorBox(pc, errors)}
      <form method="post" action="/signin" ${tid(pc, 'signin-form')} data-form="signin">
        ${field(pc, { name: 'username', label: 'Email address', value: username, type: 'email', autocomplete: 'username' })}
        ${field(pc, { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' })}
        ${hidden('next', next)}
        ${submitButton(pc, 'signin-submit', 'Sign in', 'Continue')}
      </form>
      <p class="muted">Demo site: the demo accounts are printed by <code>npm run local:sites</code>.</p>`;
    return html(renderPage(pc, { title: 'Sign in', main, page: 'signin' }), status);
  };

  const codePage = (req: SiteRequest, s: SessionRecord, errors: string[], status = 200): SiteResponse => {
    const pc = rt.page(req);
    const account = rt.def.accounts.find((a) => a.username === s.username);
    const method = account?.mfa.kind === 'outbox' ? 'outbox' : 'totp';
    const hint =
      account?.mfa.kind === 'outbox'
        ? `We sent a 6-digit code by text message to ${maskPhone(account.mfa.phone)}. It expires in 10 minutes.`
        : 'Enter the 6-digit code from your authenticator app.';
    const main = `<h1>Two-step verification</h1>${errorBox(pc, errors)}
      <p ${tid(pc, 'code-hint')} data-method="${method}">${esc(hint)}</p>
      <form method="post" action="/signin/code" ${tid(pc, 'code-form')} data-form="code">
        ${field(pc, { name: 'code', label: 'Verification code', inputmode: 'numeric', autocomplete: 'one-time-code', width: 'short' })}
        ${submitButton(pc, 'code-submit', 'Verify', 'Confirm code')}
      </form>`;
    return html(renderPage(pc, { title: 'Verification code', main, page: 'signin-code' }), status);
  };

  router.get('/signin', (req) => {
    if (rt.user(req)) return redirect(safeNext(req.query.get('next'), rt.def.homePath));
    return signInPage(req, []);
  });

  router.post('/signin', (req) => {
    const username = (req.form.get('username') ?? '').trim().toLowerCase();
    const password = req.form.get('password') ?? '';
    const errors: string[] = [];
    if (!username) errors.push('Enter your email address');
    if (!password) errors.push('Enter your password');
    if (errors.length) return signInPage(req, errors, username, 400);
    const account: DemoAccount | undefined = rt.def.accounts.find((a) => a.username === username);
    if (!account || account.password !== password) {
      return signInPage(req, ['Incorrect email address or password'], username, 401);
    }
    const next = safeNext(req.form.get('next'), rt.def.homePath);
    const session: SessionRecord = {
      id: randomId(),
      username: account.username,
      stage: account.mfa.kind === 'none' ? 'signed_in' : 'mfa_pending',
      createdAt: new Date().toISOString(),
      next,
      failedCodes: 0,
    };
    rt.store.update((state) => {
      const old = req.cookies[rt.cookieName];
      if (old) delete state.sessions[old];
      if (account.mfa.kind === 'outbox') {
        session.code = String(randomInt(0, 1_000_000)).padStart(6, '0');
        session.codeExpiresAt = new Date(Date.now() + CODE_TTL_MS).toISOString();
        state.outbox.push({
          id: randomId(8),
          username: account.username,
          to: account.mfa.phone,
          code: session.code,
          text: `${rt.def.info.title}: your sign-in code is ${session.code}. It expires in 10 minutes.`,
          sentAt: new Date().toISOString(),
        });
      }
      state.sessions[session.id] = session;
    });
    const cookie = sessionCookie(rt.cookieName, session.id);
    return redirect(session.stage === 'signed_in' ? next : '/signin/code', { 'set-cookie': cookie });
  });

  router.get('/signin/code', (req) => {
    const s = rt.session(req);
    if (!s) return redirect('/signin');
    if (s.stage === 'signed_in') return redirect(s.next);
    return codePage(req, s, []);
  });

  router.post('/signin/code', async (req) => {
    const s = rt.session(req);
    if (!s) return redirect('/signin');
    if (s.stage === 'signed_in') return redirect(s.next);
    const code = (req.form.get('code') ?? '').replace(/\s/g, '');
    if (!/^\d{6}$/.test(code)) return codePage(req, s, ['Enter the 6-digit code'], 400);
    const account = rt.def.accounts.find((a) => a.username === s.username);
    let ok = false;
    if (account?.mfa.kind === 'totp') {
      ok = (await verifyTotp({ secret: account.mfa.secret, token: code, epochTolerance: 30 })).valid;
    } else if (account?.mfa.kind === 'outbox') {
      ok = s.code === code && Date.parse(s.codeExpiresAt ?? '') > Date.now();
    }
    if (!ok) {
      const locked = rt.store.update((state) => {
        s.failedCodes += 1;
        if (s.failedCodes < MAX_FAILED_CODES) return false;
        delete state.sessions[s.id];
        return true;
      });
      if (locked) return redirect('/signin?reason=locked', { 'set-cookie': clearCookie(rt.cookieName) });
      return codePage(req, s, ['That code is incorrect or has expired'], 401);
    }
    rt.store.update(() => {
      s.stage = 'signed_in';
      delete s.code;
      delete s.codeExpiresAt;
    });
    return redirect(s.next);
  });

  router.post('/signout', (req) => {
    const id = req.cookies[rt.cookieName];
    if (id) rt.store.update((state) => delete state.sessions[id]);
    return redirect('/signin', { 'set-cookie': clearCookie(rt.cookieName) });
  });
}
