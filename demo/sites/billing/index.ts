/**
 * The demo billing system: find a customer's account, change its billing address. The change
 * carries an idempotency key (hidden field): a repeated key answers with the change it
 * already made. The account page shows the address and the recent changes.
 */
import { DEMO_ACCOUNTS } from '../../accounts.ts';
import { addressErrorList, addressFields, formatAddress, parseAddress } from '../http/address.ts';
import {
  byLayout,
  errorBox,
  esc,
  field,
  hidden,
  money,
  noticeBox,
  renderPage,
  submitButton,
  tid,
} from '../http/html.ts';
import type { Router, SiteRequest, SiteResponse } from '../http/router.ts';
import { html, redirect } from '../http/router.ts';
import type { SiteDefinition, SiteRuntime } from '../http/runtime.ts';
import { randomId } from '../http/runtime.ts';
import type { BillingAccount, BillingData } from './data.ts';
import { seedBilling } from './data.ts';
import { invoiceRoutes, invoiceSection } from './invoices.ts';

/** Printable ASCII, no spaces: job ids and step ids make `jobId:stepId`. */
const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

function routes(router: Router, rt: SiteRuntime<BillingData>): void {
  router.get('/', () => redirect('/accounts'));
  invoiceRoutes(router, rt);

  router.get(
    '/accounts',
    rt.signedIn((req) => {
      const pc = rt.page(req);
      const q = (req.query.get('q') ?? '').trim().toLowerCase();
      const list = Object.values(rt.data.accounts).filter(
        (a) => !q || `${a.id} ${a.customerName} ${a.email}`.toLowerCase().includes(q),
      );
      const row = (a: BillingAccount): string =>
        `<tr ${tid(pc, 'account-row')} data-id="${esc(a.id)}" data-email="${esc(a.email)}"><td><a href="/accounts/${esc(a.id)}" ${tid(pc, 'account-link')}>${esc(a.id)}</a></td><td>${esc(a.customerName)}</td><td>${esc(a.email)}</td><td class="num">${money(a.balancePence)}</td></tr>`;
      const table = list.length
        ? `<table><thead><tr><th>Account</th><th>Customer</th><th>Billing email</th><th class="num">Balance</th></tr></thead><tbody>${list.map(row).join('')}</tbody></table>`
        : `<p ${tid(pc, 'no-accounts')}>No accounts match your search.</p>`;
      const main = `<h1>Accounts</h1><form method="get" action="/accounts" role="search" ${tid(pc, 'account-search')}>
        ${field(pc, { name: 'q', label: 'Find an account (customer, billing email or account id)', value: req.query.get('q') ?? '', testid: 'account-query' })}
        ${submitButton(pc, 'account-search-submit', 'Search', 'Look up')}</form>${byLayout(pc, table, `<div class="v2-table">${table}</div>`)}`;
      return html(renderPage(pc, { title: 'Accounts', main, page: 'accounts' }));
    }),
  );

  router.get(
    '/accounts/:id',
    rt.signedIn((req) => {
      const pc = rt.page(req);
      const a = rt.data.accounts[req.params.id ?? ''];
      if (!a)
        return html(
          renderPage(pc, { title: 'Not found', main: '<h1>Account not found</h1>', page: 'missing' }),
          404,
        );
      const notice = req.query.get('updated')
        ? req.query.get('repeat')
          ? 'This change was already made.'
          : 'Billing address updated.'
        : undefined;
      const changes = rt.data.changes
        .filter((c) => c.accountId === a.id)
        .slice(-5)
        .reverse()
        .map(
          (c) =>
            `<li>${esc(new Date(c.at).toUTCString())}: address version ${c.addressVersion} by ${esc(c.by)} <code>${esc(c.key)}</code></li>`,
        )
        .join('');
      const ad = a.address;
      const main = `${noticeBox(pc, notice)}<div ${tid(pc, 'account')} data-id="${esc(a.id)}" data-address-version="${a.addressVersion}">
        <h1>${esc(a.customerName)} <span class="muted">${esc(a.id)}</span></h1>
        <dl class="kv"><dt>Plan</dt><dd>${esc(a.plan)}</dd><dt>Balance</dt><dd>${money(a.balancePence)}</dd><dt>Billing email</dt><dd>${esc(a.email)}</dd>
        <dt>Billing address</dt><dd ${tid(pc, 'billing-address')} data-line1="${esc(ad.line1)}" data-city="${esc(ad.city)}" data-postcode="${esc(ad.postcode)}" data-country="${esc(ad.country)}" data-version="${a.addressVersion}">${formatAddress(ad)}</dd></dl></div>
        <p><a class="btn" href="/accounts/${esc(a.id)}/address" ${tid(pc, 'change-address')}>${byLayout(pc, 'Change billing address', 'Edit address')}</a> <a href="/accounts">Back to accounts</a></p>
        ${invoiceSection(pc, a)}
        <h2>Recent changes</h2>${changes ? `<ul>${changes}</ul>` : '<p class="muted">None yet.</p>'}`;
      return html(renderPage(pc, { title: a.customerName, main, page: 'account' }));
    }),
  );

  const addressPage = (
    req: SiteRequest,
    a: BillingAccount,
    errors: string[] = [],
    status = 200,
  ): SiteResponse => {
    const pc = rt.page(req);
    const posted = req.method === 'POST';
    const { address, errors: fieldErrors } = posted
      ? parseAddress(req.form, false)
      : { address: a.address, errors: {} };
    const main = `<h1>Change billing address</h1><p>${esc(a.customerName)} (${esc(a.id)})</p>${errorBox(pc, errors)}
      <form method="post" action="/accounts/${esc(a.id)}/address" ${tid(pc, 'address-form')}>
        ${hidden('idempotencyKey', posted ? (req.form.get('idempotencyKey') ?? '') : randomId())}
        ${addressFields(pc, address, fieldErrors, false)}
        ${submitButton(pc, 'address-submit', 'Update billing address', 'Apply')}</form>`;
    return html(renderPage(pc, { title: 'Change billing address', main, page: 'account-address' }), status);
  };

  router.get(
    '/accounts/:id/address',
    rt.signedIn((req) => {
      const a = rt.data.accounts[req.params.id ?? ''];
      return a ? addressPage(req, a) : html('<h1>Account not found</h1>', 404);
    }),
  );

  router.post(
    '/accounts/:id/address',
    rt.signedIn((req, user) => {
      const a = rt.data.accounts[req.params.id ?? ''];
      if (!a) return html('<h1>Account not found</h1>', 404);
      const key = (req.form.get('idempotencyKey') ?? '').trim();
      if (!KEY_PATTERN.test(key))
        return addressPage(req, a, ['The form has expired: reload the page and try again.'], 400);
      rt.store.update(() => rt.noteKeyAttempt(key));
      if (rt.refusal) return addressPage(req, a, [rt.refusal], 422);
      const done = rt.earlierWrite(() => rt.data.changes.find((c) => c.key === key));
      if (done && done.accountId !== a.id)
        return addressPage(req, a, ['This change reference was already used for another account.'], 409);
      if (done) return redirect(`/accounts/${a.id}?updated=1&repeat=1`);
      const { address, errors } = parseAddress(req.form, false);
      const list = addressErrorList(errors);
      if (list.length) return addressPage(req, a, list, 400);
      rt.store.update((state) => {
        const at = new Date().toISOString();
        const next: BillingAccount = { ...a, address, addressVersion: a.addressVersion + 1, updatedAt: at };
        state.data.accounts[a.id] = next;
        state.data.changes.push({
          key,
          accountId: a.id,
          addressVersion: next.addressVersion,
          at,
          by: user.username,
        });
      });
      return rt.committed(redirect(`/accounts/${a.id}?updated=1`));
    }),
  );

  router.get(
    '/activity',
    rt.signedIn((req) => {
      const pc = rt.page(req);
      const key = (req.query.get('key') ?? '').trim();
      const list = rt.data.changes.filter((c) => !key || c.key === key);
      const rows = list
        .map(
          (c) =>
            `<tr ${tid(pc, 'activity-row')} data-key="${esc(c.key)}" data-account-id="${esc(c.accountId)}" data-address-version="${c.addressVersion}"><td>${esc(new Date(c.at).toUTCString())}</td><td><a href="/accounts/${esc(c.accountId)}">${esc(c.accountId)}</a></td><td>address v${c.addressVersion}</td><td><code>${esc(c.key)}</code></td></tr>`,
        )
        .join('');
      const body = list.length
        ? `<table><thead><tr><th>When</th><th>Account</th><th>Change</th><th>Reference</th></tr></thead><tbody>${rows}</tbody></table>`
        : `<p ${tid(pc, 'activity-empty')} data-key="${esc(key)}">No activity${key ? ` with reference “${esc(key)}”` : ''}.</p>`;
      return html(renderPage(pc, { title: 'Activity', main: `<h1>Activity</h1>${body}`, page: 'activity' }));
    }),
  );
}

/** Billing's site definition (see `startSites`). */
export const billingSite: SiteDefinition<BillingData> = {
  info: { name: 'billing', title: 'Tally Billing', accent: '#8e3b00' },
  accounts: DEMO_ACCOUNTS.billing,
  seed: seedBilling,
  homePath: '/accounts',
  nav: (signedIn) =>
    signedIn
      ? [
          { href: '/accounts', label: 'Accounts', testid: 'nav-accounts' },
          { href: '/activity', label: 'Activity', testid: 'nav-activity' },
        ]
      : [],
  routes,
  downloads: (data) => (data.downloads ?? []).map((d) => ({ file: `${d.invoiceId}.pdf`, ...d })),
  writes: (data) => ({
    kind: 'billing-change',
    items: data.changes.map((c) => ({
      key: c.key,
      accountId: c.accountId,
      addressVersion: c.addressVersion,
      at: c.at,
      by: c.by,
    })),
  }),
};
