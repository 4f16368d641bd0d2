/**
 * The demo CRM: find a customer, edit and save the record. A save carries an idempotency key
 * (hidden field): a repeated key answers with the save it already made and does not bump the
 * version again. A save from a stale form (another save came first) is refused as a conflict.
 */
import { DEMO_ACCOUNTS } from '../../accounts.ts';
import { addressErrorList, addressFields, formatAddress, parseAddress } from '../http/address.ts';
import type { PageContext } from '../http/html.ts';
import {
  byLayout,
  errorBox,
  esc,
  field,
  hidden,
  noticeBox,
  renderPage,
  submitButton,
  tid,
} from '../http/html.ts';
import type { SiteRequest, SiteResponse } from '../http/router.ts';
import { html, redirect } from '../http/router.ts';
import type { SiteDefinition, SiteRuntime } from '../http/runtime.ts';
import { randomId } from '../http/runtime.ts';
import { attachmentRoutes, attachmentSection } from './attachments.ts';
import type { CrmData, Customer } from './data.ts';
import { seedCrm } from './data.ts';

/** Printable ASCII, no spaces: job ids and step ids make `jobId:stepId`. */
const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

function addressAttrs(c: Customer): string {
  const a = c.address;
  return `data-line1="${esc(a.line1)}" data-city="${esc(a.city)}" data-postcode="${esc(a.postcode)}" data-country="${esc(a.country)}"`;
}

function customerList(pc: PageContext, list: Customer[]): string {
  const row = (c: Customer): string =>
    byLayout(
      pc,
      `<tr ${tid(pc, 'customer-row')} data-id="${esc(c.id)}" data-email="${esc(c.email)}"><td><a href="/customers/${esc(c.id)}" ${tid(pc, 'customer-link')}>${esc(c.company)}</a></td><td>${esc(c.contactName)}</td><td>${esc(c.email)}</td><td>${esc(c.id)}</td></tr>`,
      `<li ${tid(pc, 'customer-row')} data-id="${esc(c.id)}" data-email="${esc(c.email)}"><a href="/customers/${esc(c.id)}" ${tid(pc, 'customer-link')}>${esc(c.company)}</a> (${esc(c.email)})</li>`,
    );
  if (list.length === 0) return `<p ${tid(pc, 'no-customers')}>No customers match your search.</p>`;
  return byLayout(
    pc,
    `<table><thead><tr><th>Company</th><th>Contact</th><th>Email</th><th>Id</th></tr></thead><tbody>${list.map(row).join('')}</tbody></table>`,
    `<ul>${list.map(row).join('')}</ul>`,
  );
}

function routes(router: Parameters<SiteDefinition<CrmData>['routes']>[0], rt: SiteRuntime<CrmData>): void {
  router.get('/', () => redirect('/customers'));
  attachmentRoutes(router, rt);

  router.get(
    '/customers',
    rt.signedIn((req) => {
      const pc = rt.page(req);
      const q = (req.query.get('q') ?? '').trim().toLowerCase();
      const list = Object.values(rt.data.customers).filter(
        (c) => !q || `${c.id} ${c.company} ${c.contactName} ${c.email}`.toLowerCase().includes(q),
      );
      const main = `<h1>Customers</h1>
        <form method="get" action="/customers" role="search" ${tid(pc, 'customer-search')}>
          ${field(pc, { name: 'q', label: 'Find a customer (name, email or id)', value: req.query.get('q') ?? '', testid: 'customer-query' })}
          ${submitButton(pc, 'customer-search-submit', 'Search', 'Look up')}</form>${customerList(pc, list)}`;
      return html(renderPage(pc, { title: 'Customers', main, page: 'customers' }));
    }),
  );

  router.get(
    '/customers/:id',
    rt.signedIn((req) => {
      const pc = rt.page(req);
      const c = rt.data.customers[req.params.id ?? ''];
      if (!c)
        return html(
          renderPage(pc, { title: 'Not found', main: '<h1>Customer not found</h1>', page: 'missing' }),
          404,
        );
      const saved = req.query.get('saved');
      const notice = saved
        ? req.query.get('repeat')
          ? `Already saved as version ${saved}.`
          : `Saved. The record is now version ${saved}.`
        : undefined;
      const main = `${noticeBox(pc, notice)}<div ${tid(pc, 'record')} data-id="${esc(c.id)}" data-version="${c.version}">
        <h1>${esc(c.company)}</h1><p><span class="tag" ${tid(pc, 'record-version')} data-version="${c.version}">Version ${c.version}</span>
        <span class="muted">last saved ${esc(new Date(c.updatedAt).toUTCString())} by ${esc(c.updatedBy)}</span></p>
        <dl class="kv"><dt>Customer id</dt><dd>${esc(c.id)}</dd><dt>Contact</dt><dd ${tid(pc, 'record-contact')}>${esc(c.contactName)}</dd>
        <dt>Email</dt><dd ${tid(pc, 'record-email')}>${esc(c.email)}</dd><dt>Phone</dt><dd ${tid(pc, 'record-phone')}>${esc(c.phone)}</dd>
        <dt>Address</dt><dd ${tid(pc, 'record-address')} ${addressAttrs(c)}>${formatAddress(c.address)}</dd>
        <dt>Notes</dt><dd>${esc(c.notes) || '<span class="muted">none</span>'}</dd></dl></div>
        <p><a class="btn" href="/customers/${esc(c.id)}/edit" ${tid(pc, 'edit-record')}>${byLayout(pc, 'Edit record', 'Modify')}</a>
        <a href="/customers">Back to customers</a></p>${attachmentSection(pc, rt, c.id)}`;
      return html(renderPage(pc, { title: c.company, main, page: 'customer' }));
    }),
  );

  const editPage = (req: SiteRequest, c: Customer, errors: string[] = [], status = 200): SiteResponse => {
    const pc = rt.page(req);
    const posted = req.method === 'POST';
    const v = (k: string, fallback: string): string => (posted ? (req.form.get(k) ?? '') : fallback);
    const { address, errors: addressErrors } = posted
      ? parseAddress(req.form, false)
      : { address: c.address, errors: {} };
    const main = `<h1>Edit ${esc(c.company)}</h1>${errorBox(pc, errors)}
      <form method="post" action="/customers/${esc(c.id)}" ${tid(pc, 'record-form')}>
        ${hidden('version', posted ? (req.form.get('version') ?? '') : String(c.version))}${hidden('idempotencyKey', posted ? (req.form.get('idempotencyKey') ?? '') : randomId())}
        ${field(pc, { name: 'contactName', label: 'Contact name', value: v('contactName', c.contactName) })}
        ${field(pc, { name: 'email', label: 'Email', type: 'email', value: v('email', c.email) })}
        ${field(pc, { name: 'phone', label: 'Phone', type: 'tel', value: v('phone', c.phone) })}
        <h2>Address</h2>${addressFields(pc, address, addressErrors, false)}
        ${field(pc, { name: 'notes', label: 'Notes', value: v('notes', c.notes) })}
        ${submitButton(pc, 'save-record', 'Save record', 'Store changes')}</form>`;
    return html(renderPage(pc, { title: `Edit ${c.company}`, main, page: 'customer-edit' }), status);
  };

  router.get(
    '/customers/:id/edit',
    rt.signedIn((req) => {
      const c = rt.data.customers[req.params.id ?? ''];
      if (!c) return html('<h1>Customer not found</h1>', 404);
      return editPage(req, c);
    }),
  );

  router.post(
    '/customers/:id',
    rt.signedIn((req, account) => {
      const c = rt.data.customers[req.params.id ?? ''];
      if (!c) return html('<h1>Customer not found</h1>', 404);
      const key = (req.form.get('idempotencyKey') ?? '').trim();
      if (!KEY_PATTERN.test(key))
        return editPage(req, c, ['The form has expired: reload the page and try again.'], 400);
      rt.store.update(() => rt.noteKeyAttempt(key));
      if (rt.refusal) return editPage(req, c, [rt.refusal], 422);
      const done = rt.earlierWrite(() => rt.data.changes.find((ch) => ch.key === key));
      if (done && done.customerId !== c.id)
        return editPage(req, c, ['This change reference was already used for another record.'], 409);
      if (done) return redirect(`/customers/${c.id}?saved=${done.version}&repeat=1`);
      const { address, errors: addressErrors } = parseAddress(req.form, false);
      const contactName = (req.form.get('contactName') ?? '').trim();
      const email = (req.form.get('email') ?? '').trim();
      const phone = (req.form.get('phone') ?? '').trim();
      const errors = [
        ...(contactName ? [] : ['Enter the contact name']),
        ...(/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)
          ? []
          : ['Enter an email address in the correct format, like name@example.com']),
        ...(phone === '' || /^\+?[\d ()-]{6,20}$/.test(phone)
          ? []
          : ['Enter a phone number, like +44 20 7946 0000']),
        ...addressErrorList(addressErrors),
      ];
      if (errors.length) return editPage(req, c, errors, 400);
      if (rt.guardsByState && req.form.get('version') !== String(c.version)) {
        return editPage(
          req,
          c,
          [
            `This record was changed by someone else (now version ${c.version}). Reload it and make your change again.`,
          ],
          409,
        );
      }
      const next: Customer = {
        ...c,
        contactName,
        email,
        phone,
        address,
        notes: (req.form.get('notes') ?? '').trim(),
      };
      const fields: string[] = (['contactName', 'email', 'phone', 'notes'] as const).filter(
        (k) => next[k] !== c[k],
      );
      if (JSON.stringify(next.address) !== JSON.stringify(c.address)) fields.push('address');
      rt.store.update((state) => {
        next.version = c.version + 1;
        next.updatedAt = new Date().toISOString();
        next.updatedBy = account.username;
        state.data.customers[c.id] = next;
        state.data.changes.push({
          key,
          customerId: c.id,
          version: next.version,
          at: next.updatedAt,
          by: account.username,
          fields,
        });
      });
      return rt.committed(redirect(`/customers/${c.id}?saved=${next.version}`));
    }),
  );

  router.get(
    '/audit',
    rt.signedIn((req) => {
      const pc = rt.page(req);
      const key = (req.query.get('key') ?? '').trim();
      const list = rt.data.changes.filter((ch) => !key || ch.key === key);
      const rows = list
        .map(
          (ch) =>
            `<tr ${tid(pc, 'audit-row')} data-key="${esc(ch.key)}" data-customer-id="${esc(ch.customerId)}" data-version="${ch.version}"><td>${esc(new Date(ch.at).toUTCString())}</td><td><a href="/customers/${esc(ch.customerId)}">${esc(ch.customerId)}</a></td><td>v${ch.version}</td><td>${esc(ch.fields.join(', '))}</td><td><code>${esc(ch.key)}</code></td></tr>`,
        )
        .join('');
      const body = list.length
        ? `<table><thead><tr><th>When</th><th>Customer</th><th>Version</th><th>Changed</th><th>Reference</th></tr></thead><tbody>${rows}</tbody></table>`
        : `<p ${tid(pc, 'audit-empty')} data-key="${esc(key)}">No changes${key ? ` with reference “${esc(key)}”` : ''}.</p>`;
      return html(renderPage(pc, { title: 'Audit log', main: `<h1>Audit log</h1>${body}`, page: 'audit' }));
    }),
  );
}

/** The CRM's site definition (see `startSites`). */
export const crmSite: SiteDefinition<CrmData> = {
  info: { name: 'crm', title: 'Ledgerline CRM', accent: '#3949ab' },
  accounts: DEMO_ACCOUNTS.crm,
  seed: seedCrm,
  homePath: '/customers',
  nav: (signedIn) =>
    signedIn
      ? [
          { href: '/customers', label: 'Customers', testid: 'nav-customers' },
          { href: '/audit', label: 'Audit log', testid: 'nav-audit' },
        ]
      : [],
  routes,
  writes: (data) => ({
    kind: 'crm-change',
    items: [
      ...data.changes.map((ch) => ({
        key: ch.key,
        customerId: ch.customerId,
        version: ch.version,
        at: ch.at,
        by: ch.by,
      })),
      // An attachment is a committed write too: the suite counts uploads as it counts saves.
      ...(data.attachments ?? []).map((a) => ({
        key: a.key,
        customerId: a.customerId,
        attachmentId: a.id,
        name: a.name,
        size: a.size,
        sha256: a.sha256,
        at: a.at,
        by: a.by,
      })),
    ],
  }),
};
