import { describe, expect, it } from 'vitest';
import {
  clip,
  htmlText,
  MAX_EXCERPT_BYTES,
  responseExcerpt,
} from '../../../lambdas/lib/browser/response-excerpt.ts';

const scope = { tenantId: 'tenant-excerpt' };

describe('Function: responseExcerpt', () => {
  it('keeps JSON with secret-named members masked and card numbers cut to their last four', () => {
    const body = Buffer.from(
      JSON.stringify({ id: 'O-100042', token: 'abc123secret', card: '4111 1111 1111 1111' }),
    );
    expect(responseExcerpt('application/json; charset=utf-8', body, scope)).toBe(
      '{"id":"O-100042","token":"[redacted]","card":"[card ****1111]"}',
    );
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
