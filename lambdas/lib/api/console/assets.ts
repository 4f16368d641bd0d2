/**
 * The console's script and style sheet, served from `/console/assets/` (the CSP allows only
 * these: no inline script or style). The script does three things: answers questions, MFA
 * codes and cancels with `fetch` (the session cookie plus the page's CSRF token), reloads a
 * page's `main` every few seconds while nobody is typing in it, and says what happened in the
 * page's live region. Connecting an account goes on to the hosted sign-in the answer names.
 * Without it the forms still post (and come back to the job's page, or go on to the sign-in).
 */

export const CONSOLE_JS = `'use strict';
(() => {
  const csrf = document.querySelector('meta[name="belay-csrf"]')?.getAttribute('content') ?? '';
  const status = document.getElementById('status');
  const say = (text) => { if (status) status.textContent = text; };
  const busy = (main) => {
    const active = document.activeElement;
    if (active && main.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
    // A person working in a live view: reloading would cut their view of the browser.
    if (main.querySelector('iframe.live-view')) return true;
    return [...main.querySelectorAll('textarea, input[name="code"]')].some((el) => el.value !== '');
  };
  async function refresh(force) {
    const main = document.getElementById('main');
    if (!main || (!force && (!main.dataset.refresh || busy(main)))) return;
    try {
      const res = await fetch(location.href, { credentials: 'same-origin', headers: { 'X-Belay-Refresh': '1' } });
      if (!res.ok) return;
      const next = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('main');
      if (next) main.replaceChildren(...[...next.childNodes].map((n) => document.importNode(n, true)));
    } catch {}
  }
  const main = document.getElementById('main');
  const every = Number(main?.dataset.refresh ?? 0);
  if (every > 0) setInterval(() => void refresh(false), every * 1000);
  const DONE = { decision: 'Decision recorded; the job goes on.', mfa: 'Code sent; the job goes on once the sign-in is verified.', takeover: 'Done: the page is where the step goes on from; the job goes on.', cancel: 'The job is cancelled.' };
  document.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.belayForm) return;
    event.preventDefault();
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const body = {};
    for (const [name, value] of new FormData(form, event.submitter)) {
      if (name !== 'csrf' && value !== '') body[name] = value;
    }
    const buttons = [...form.querySelectorAll('button')];
    for (const b of buttons) b.disabled = true;
    say('Sending…');
    try {
      const res = await fetch(form.action, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-Belay-CSRF': csrf },
        body: JSON.stringify(body),
      });
      const answer = await res.json().catch(() => ({}));
      const next = String((answer.connection && answer.connection.connectUrl) || '');
      if (res.ok && form.dataset.belayForm === 'connect' && (next.startsWith('https://') || next.startsWith('http://'))) {
        say('Going to the sign-in…');
        location.assign(next);
      } else if (res.ok) {
        say(DONE[form.dataset.belayForm] ?? 'Done.');
        await refresh(true);
      } else {
        say((answer.error && answer.error.message) || 'The request failed (' + res.status + ').');
        for (const b of buttons) b.disabled = false;
      }
    } catch (err) {
      say('The request failed: ' + err);
      for (const b of buttons) b.disabled = false;
    }
  });
})();
`;

export const CONSOLE_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0550ae; --danger: #a40e26; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header nav { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
a { color: var(--accent); }
a[aria-current="page"] { font-weight: 700; }
.brand { font-weight: 800; text-decoration: none; color: var(--fg); }
.who { color: var(--muted); }
main { padding: 1rem 1.2rem; max-width: 72rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
caption { text-align: left; color: var(--muted); padding: .2rem 0; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.status { padding: .05rem .4rem; border-radius: .3rem; background: #eaeef2; font-size: .85em; font-weight: 600; }
.status-succeeded, .status-connected { background: #dafbe1; color: #116329; }
.status-failed, .status-cancelled, .status-revoked { background: #ffebe9; color: #82071e; }
.status-waiting_approval, .status-waiting_mfa, .status-waiting_review { background: #fff8c5; color: #633c01; }
.question { border: 1px solid var(--line); border-radius: .5rem; padding: .8rem 1rem; margin: 1rem 0; }
.meta, .note, figcaption { color: var(--muted); }
.finding { background: #f6f8fa; padding: .4rem .6rem; }
.fields { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .3rem 0; }
.fields div { display: contents; }
.fields dt { font-weight: 600; }
.fields dd { margin: 0; overflow-wrap: anywhere; }
.summary { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
.summary div { display: contents; }
.summary dt { font-weight: 600; }
.summary dd { margin: 0; }
.timeline { list-style: none; padding: 0; }
.entry { border-left: 3px solid var(--line); padding: .2rem 0 .6rem .8rem; margin-bottom: .4rem; }
.entry-approval-recorded, .entry-review-recorded { border-color: var(--accent); }
.entry-step-failed, .entry-failed { border-color: var(--danger); }
.head { margin: 0; }
.decision { margin: .2rem 0; }
.shot img { max-width: 100%; height: auto; border: 1px solid var(--line); }
.live-view { display: block; width: 100%; height: 40rem; border: 1px solid var(--line); background: #222; }
form.answer { display: grid; gap: .4rem; max-width: 40rem; }
form.inline { display: inline; }
.buttons { display: flex; gap: .6rem; }
button { font: inherit; padding: .3rem .9rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: .3rem; cursor: pointer; }
button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
button:disabled { opacity: .6; }
header button { background: #fff; color: var(--accent); }
input, select, textarea { font: inherit; padding: .25rem .4rem; }
fieldset { border: 1px solid var(--line); }
.error { color: var(--danger); }
#status { position: fixed; bottom: .5rem; right: .5rem; background: #fff; padding: 0 .5rem; }
code { font-size: .92em; }
`;
