/**
 * Billing's invoices: one per account, its PDF made the same bytes every time from the account
 * (a real, ASCII-only PDF 1.4, so a text body carries it unchanged). Each PDF served is counted
 * (`GET /__admin/downloads`), so a test can tell a file downloaded once from one downloaded twice.
 */

import type { PageContext } from '../http/html.ts';
import { esc, tid } from '../http/html.ts';
import type { Router, SiteResponse } from '../http/router.ts';
import { html } from '../http/router.ts';
import type { SiteRuntime } from '../http/runtime.ts';
import type { BillingAccount, BillingData } from './data.ts';

/** The account's invoice id: `INV-5003-01` for `BA-5003`. */
export function invoiceIdOf(account: Pick<BillingAccount, 'id'>): string {
  return `INV-${account.id.replace(/^BA-/, '')}-01`;
}

/** The invoice PDF's file name, as the download names it. */
export function invoiceFileName(invoiceId: string): string {
  return `invoice-${invoiceId}.pdf`;
}

/** A one-page PDF whose page says `lines` (ASCII), with a correct cross-reference table. */
export function pdfOf(lines: readonly string[]): string {
  const text = lines
    .map((l, i) => `BT /F1 12 Tf 72 ${720 - i * 18} Td (${l.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj ET`)
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return out;
}

/** The invoice PDF of `account`: the same bytes for the same account. */
export function invoicePdf(account: BillingAccount): string {
  const id = invoiceIdOf(account);
  return pdfOf([
    `Tally Billing - Invoice ${id}`,
    `Account ${account.id}: ${account.customerName}`,
    `Plan: ${account.plan}`,
    `Amount due: GBP ${(account.balancePence / 100).toFixed(2)}`,
    'Issued 2024-02-01',
  ]);
}

/** The account page's invoice section: one row with its download link. */
export function invoiceSection(pc: PageContext, a: BillingAccount): string {
  const id = invoiceIdOf(a);
  return `<h2>Invoices</h2><ul><li ${tid(pc, 'invoice-row')} data-invoice="${esc(id)}">${esc(id)}
    <a href="/accounts/${esc(a.id)}/invoices/${esc(id)}.pdf" download="${esc(invoiceFileName(id))}" ${tid(pc, 'invoice-download')} data-invoice="${esc(id)}">Download PDF</a></li></ul>`;
}

export function invoiceRoutes(router: Router, rt: SiteRuntime<BillingData>): void {
  router.get(
    '/accounts/:id/invoices/:file',
    rt.signedIn((req, user): SiteResponse => {
      const a = rt.data.accounts[req.params.id ?? ''];
      const id = a ? invoiceIdOf(a) : undefined;
      if (!a || req.params.file !== `${id}.pdf`) return html('<h1>Invoice not found</h1>', 404);
      const invoiceId = id as string;
      rt.store.update((state) => {
        state.data.downloads ??= [];
        state.data.downloads.push({
          invoiceId,
          accountId: a.id,
          at: new Date().toISOString(),
          by: user.username,
        });
      });
      return {
        status: 200,
        headers: {
          'content-type': 'application/pdf',
          'content-disposition': `attachment; filename="${invoiceFileName(invoiceId)}"`,
        },
        body: invoicePdf(a),
      };
    }),
  );
}
