/**
 * Attachments on a CRM customer record: a file input on the record page, posted as
 * multipart/form-data with an idempotency key (hidden field). Every post commits a new
 * attachment and keeps its bytes (the site de-duplicates nothing unless its `dedupe` mode is
 * on); the record page lists each attachment with its name, size and SHA-256, so a probe can
 * tell whether the file it means is there, and how many times.
 */
import { createHash } from 'node:crypto';
import type { PageContext } from '../http/html.ts';
import { esc, hidden, tid } from '../http/html.ts';
import type { Router } from '../http/router.ts';
import { html, redirect } from '../http/router.ts';
import type { SiteRuntime } from '../http/runtime.ts';
import { randomId } from '../http/runtime.ts';
import type { CrmAttachment, CrmData } from './data.ts';

const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;
const NAME_PATTERN = /^[A-Za-z0-9 _.()+-]{1,128}$/;
/** The site's request body limit is 1 MB; a file a little under it fits. */
export const MAX_ATTACHMENT_BYTES = 900_000;

/** The record page's attachments: the list (name, size, sha256, key) and the upload form. */
export function attachmentSection(pc: PageContext, rt: SiteRuntime<CrmData>, customerId: string): string {
  const list = (rt.data.attachments ?? []).filter((a) => a.customerId === customerId);
  const rows = list
    .map(
      (a) =>
        `<li ${tid(pc, 'attachment-row')} data-id="${esc(a.id)}" data-key="${esc(a.key)}" data-name="${esc(a.name)}" data-size="${a.size}" data-sha256="${esc(a.sha256)}">${esc(a.name)} <span class="muted">${a.size} bytes, sha256 ${esc(a.sha256.slice(0, 12))}…</span></li>`,
    )
    .join('');
  return `<h2>Attachments</h2>${list.length ? `<ul ${tid(pc, 'attachments')}>${rows}</ul>` : `<p ${tid(pc, 'attachments-empty')}>No attachments.</p>`}
    <form method="post" action="/customers/${esc(customerId)}/attachments" enctype="multipart/form-data" ${tid(pc, 'attachment-form')}>
      ${hidden('idempotencyKey', randomId())}
      <label>Attach a file <input type="file" name="file" ${tid(pc, 'attachment-file')}></label>
      <button type="submit" class="btn" ${tid(pc, 'attachment-submit')}>Upload</button></form>`;
}

async function parseForm(body: string, contentType: string): Promise<FormData | undefined> {
  if (!contentType.startsWith('multipart/form-data')) return undefined;
  try {
    return await new Request('http://site/', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: Buffer.from(body, 'utf8'),
    }).formData();
  } catch {
    return undefined;
  }
}

export function attachmentRoutes(router: Router, rt: SiteRuntime<CrmData>): void {
  router.post(
    '/customers/:id/attachments',
    rt.signedIn(async (req, account) => {
      const c = rt.data.customers[req.params.id ?? ''];
      if (!c) return html('<h1>Customer not found</h1>', 404);
      const form = await parseForm(req.body, String(req.headers['content-type'] ?? ''));
      if (!form) return html('<h1>Send the file as multipart/form-data</h1>', 400);
      const key = String(form.get('idempotencyKey') ?? '').trim();
      if (!KEY_PATTERN.test(key))
        return html('<h1>The form has expired: reload the page and try again.</h1>', 400);
      rt.store.update(() => rt.noteKeyAttempt(key));
      if (rt.refusal) return html(`<p role="alert">${esc(rt.refusal)}</p>`, 422);
      const done = rt.earlierWrite(() => (rt.data.attachments ?? []).find((a) => a.key === key));
      if (done) return redirect(`/customers/${c.id}?attached=${encodeURIComponent(done.id)}&repeat=1`);
      const file = form.get('file');
      if (!(file instanceof Blob) || file.size === 0)
        return html('<p role="alert">Choose a file to attach.</p>', 400);
      const name = 'name' in file && typeof file.name === 'string' ? file.name : '';
      if (!NAME_PATTERN.test(name)) return html('<p role="alert">The file name is not allowed.</p>', 400);
      if (file.size > MAX_ATTACHMENT_BYTES) return html('<p role="alert">The file is too large.</p>', 413);
      const bytes = Buffer.from(await file.arrayBuffer());
      const attachment: CrmAttachment = {
        id: `AT-${randomId().slice(0, 10)}`,
        key,
        customerId: c.id,
        name,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        contentBase64: bytes.toString('base64'),
        at: new Date().toISOString(),
        by: account.username,
      };
      rt.store.update((state) => {
        state.data.attachments ??= [];
        state.data.attachments.push(attachment);
      });
      return rt.committed(redirect(`/customers/${c.id}?attached=${encodeURIComponent(attachment.id)}`));
    }),
  );
}
