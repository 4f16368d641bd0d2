import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../../lambdas/lib/api/console/html.ts';
import { CONSOLE_CSP } from '../../../lambdas/lib/api/console/layout.ts';

describe('Function: html', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['"><img src=x onerror=alert(1)>', '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'],
    ["' onfocus='x", '&#39; onfocus=&#39;x'],
    ['a & b', 'a &amp; b'],
  ])('escapes %s in content and attributes', (input, escaped) => {
    expect(html`<p title="${input}">${input}</p>`.value).toBe(`<p title="${escaped}">${escaped}</p>`);
    expect(escapeHtml(input)).toBe(escaped);
  });

  it('keeps nested html as it is, joins arrays and drops undefined, null and false', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`${inner}${['<', html`<br>`]}${undefined}${null}${false}`.value).toBe(
      '<b>&lt;i&gt;</b>&lt;<br>',
    );
  });

  it('the CSP allows no inline script and no framing', () => {
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
  });
});
