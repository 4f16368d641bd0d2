import { describe, expect, it } from 'vitest';
import { toEntryView } from '../../../lambdas/lib/api/jobs/views.ts';
import {
  clip,
  htmlText,
  MAX_EXCERPT_BYTES,
  responseExcerpt,
} from '../../../lambdas/lib/browser/response-excerpt.ts';
import { type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';

const scope = { tenantId: 'tenant-excerpt' };

describe('Function: responseExcerpt', () => {
  it('keeps JSON with secret-named members masked and numbers exactly, as the ledger stores values', () => {
    const body = Buffer.from(
      JSON.stringify({ id: 'O-100042', token: 'abc123secret', invoice: '4111 1111 1111 1111' }),
    );
    expect(responseExcerpt('application/json; charset=utf-8', body, scope)).toBe(
      '{"id":"O-100042","token":"[redacted]","invoice":"4111 1111 1111 1111"}',
    );
  });

  it('says nothing of a JSON answer it cannot parse (cut short at MAX_READ_BYTES): no secret-named member slips through', () => {
    const whole = JSON.stringify({
      access_token: 'tok-9f8e7d6c5b4a',
      password: 'hunter2-long',
      pad: 'x'.repeat(70_000),
    });
    const cut = Buffer.from(whole).subarray(0, 64 * 1024);
    expect(responseExcerpt('application/json', cut, scope)).toBeUndefined();
    expect(
      responseExcerpt('application/json', Buffer.from('{"password":"hunter2-long"'), scope),
    ).toBeUndefined();
  });

  it('shows people the card-like numbers masked when they read the entry (its API view)', () => {
    const body = Buffer.from(JSON.stringify({ phone: '+4479111234567', invoice: '4111 1111 1111 1111' }));
    const excerpt = responseExcerpt('application/json', body, scope) as string;
    const entry = {
      tenantId: scope.tenantId,
      jobId: 'j',
      entryId: '1',
      type: 'step-completed',
      step: 'save',
      at: '2026-01-01T00:00:00.000Z',
      cost: { ...ZERO_COST },
      detail: { writeGuard: { commits: [{ method: 'POST', url: 'http://x/api', at: 't', excerpt }] } },
    } as LedgerEntry;
    const shown = JSON.stringify(toEntryView(entry));
    expect(shown).toContain('[card ****4567]');
    expect(shown).toContain('[card ****1111]');
    expect(shown).not.toContain('4111 1111 1111 1111');
  });

  it("puts the job's sensitive inputs as their placeholders before the excerpt is cut", () => {
    const hide = (text: string): string => text.split('TX-5510109').join('{{inputs.taxId}}');
    const body = Buffer.from(JSON.stringify({ taxId: 'TX-5510109', version: 1 }));
    expect(responseExcerpt('application/json', body, scope, hide)).toBe(
      '{"taxId":"{{inputs.taxId}}","version":1}',
    );
    // Cut after hiding: no part of a value is left at the end of a long answer.
    const long = Buffer.from(`${'x'.repeat(MAX_EXCERPT_BYTES - 4)} TX-5510109`);
    const cut = responseExcerpt('text/plain', long, scope, hide) as string;
    expect(cut).not.toContain('TX-');
    expect(cut.endsWith('…')).toBe(true);
  });

  it('reads HTML as its visible text, without scripts, styles or form values', () => {
    const html =
      '<!doctype html><html><head><title>t</title><style>p{}</style></head><body><script>var k="x"</script>' +
      '<h1>Order&nbsp;placed</h1><p>Number <b>O-1</b> &amp; total &#163;12.99</p><input value="hidden-value"></body></html>';
    expect(responseExcerpt('text/html', Buffer.from(html), scope)).toBe(
      'Order placed Number O-1 & total £12.99',
    );
  });

  it.each([
    ['an empty body', 'text/plain', Buffer.alloc(0)],
    ['no body', 'text/plain', undefined],
    ['a binary body', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])],
  ])('says nothing for %s', (_what, type, body) => {
    expect(responseExcerpt(type, body, scope)).toBeUndefined();
  });

  it(`never keeps more than ${MAX_EXCERPT_BYTES} bytes, cutting at a character`, () => {
    const long = responseExcerpt('text/plain', Buffer.from('é'.repeat(1000)), scope) as string;
    expect(Buffer.byteLength(long, 'utf8')).toBeLessThanOrEqual(MAX_EXCERPT_BYTES + 3);
    expect(long.endsWith('é…')).toBe(true);
    expect(clip('short')).toBe('short');
  });

  it('masks a bearer token in plain text', () => {
    expect(responseExcerpt('text/plain', Buffer.from('ok Bearer abcdefghijklmnop'), scope)).toBe(
      'ok Bearer [redacted]',
    );
    expect(htmlText('<p>a</p>\n\n<p>b</p>')).toBe('a b');
  });
});
