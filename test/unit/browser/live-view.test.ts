/**
 * The live view's token (signing, expiry, the session and tenant it is bound to), the link the
 * adapter shows a person, and the local view's translation of a person's input into CDP
 * commands. No network.
 */
import { describe, expect, it } from 'vitest';
import {
  LIVE_VIEW_TOKEN_SECONDS,
  liveViewLinkFor,
  signLiveViewToken,
  verifyLiveViewToken,
} from '../../../lambdas/lib/browser/live-view-token.ts';
import { inputCommands, tenantOf } from '../../../local/anchor/live-view.ts';
import type { SessionRecord } from '../../../local/anchor/store.ts';

const KEY = 'anchor-api-key';
const NOW = Date.parse('2026-12-01T10:00:00Z');
const claims = {
  sessionId: 's-1',
  tenantId: 'acme',
  expiresAt: NOW / 1000 + 60,
  interactive: true,
  issuedAt: NOW,
};
const expected = { sessionId: 's-1', tenantId: 'acme' };

describe('Function: verifyLiveViewToken', () => {
  it('accepts a token signed for the session and tenant before it expires', () => {
    const check = verifyLiveViewToken(KEY, signLiveViewToken(KEY, claims), expected, NOW);
    expect(check).toEqual({ ok: true, claims });
  });

  it.each([
    ['expired', signLiveViewToken(KEY, { ...claims, expiresAt: NOW / 1000 }), expected, 'expired'],
    ['another session', signLiveViewToken(KEY, { ...claims, sessionId: 's-2' }), expected, 'other-session'],
    ['another tenant', signLiveViewToken(KEY, { ...claims, tenantId: 'globex' }), expected, 'other-tenant'],
    [
      'a session with no tenant',
      signLiveViewToken(KEY, claims),
      { sessionId: 's-1', tenantId: undefined },
      'other-tenant',
    ],
    ['another key', signLiveViewToken('other-key', claims), expected, 'bad-signature'],
    ['no token', '', expected, 'malformed'],
    ['three parts', `${signLiveViewToken(KEY, claims)}.x`, expected, 'malformed'],
  ] as const)('refuses %s', (_what, token, want, reason) => {
    expect(verifyLiveViewToken(KEY, token, want, NOW)).toEqual({ ok: false, reason });
  });

  it('refuses a payload changed after signing (a longer expiry, a tenant swapped)', () => {
    const [, signature] = signLiveViewToken(KEY, claims).split('.');
    const changed = Buffer.from(JSON.stringify({ s: 's-1', t: 'acme', e: NOW / 1000 + 86_400 })).toString(
      'base64url',
    );
    expect(verifyLiveViewToken(KEY, `${changed}.${signature}`, expected, NOW)).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });
});

describe('Function: liveViewLinkFor', () => {
  const config = { apiKey: KEY, baseUrl: 'http://127.0.0.1:8790' };

  it('signs the local service’s view for the tenant, valid for a short while', () => {
    const link = liveViewLinkFor(
      config,
      { sessionId: 's-1', liveViewUrl: 'http://127.0.0.1:8790/_local/sessions/s-1/live' },
      'acme',
      NOW,
      { interactive: true },
    ) as string;
    const token = new URL(link).searchParams.get('token');
    expect(verifyLiveViewToken(KEY, token, expected, NOW)).toMatchObject({
      ok: true,
      claims: { expiresAt: NOW / 1000 + LIVE_VIEW_TOKEN_SECONDS, interactive: true, issuedAt: NOW },
    });
    expect(verifyLiveViewToken(KEY, token, expected, NOW + LIVE_VIEW_TOKEN_SECONDS * 1000).ok).toBe(false);
  });

  it('leaves Anchor’s live view URL as Anchor gave it, and shows nothing that is not http(s)', () => {
    const anchor = 'https://live.anchorbrowser.io/?sessionId=s-1';
    const act = { interactive: true };
    expect(liveViewLinkFor(config, { sessionId: 's-1', liveViewUrl: anchor }, 'acme', NOW, act)).toBe(anchor);
    expect(
      liveViewLinkFor(config, { sessionId: 's-1', liveViewUrl: 'javascript:alert(1)' }, 'acme', NOW, act),
    ).toBe(undefined);
    expect(liveViewLinkFor(config, { sessionId: 's-1' }, 'acme', NOW, act)).toBe(undefined);
  });

  it('never gives Anchor’s link (which lets its holder act) as a watch-only view', () => {
    const anchor = 'https://live.anchorbrowser.io/?sessionId=s-1';
    expect(
      liveViewLinkFor(config, { sessionId: 's-1', liveViewUrl: anchor }, 'acme', NOW, { interactive: false }),
    ).toBe(undefined);
  });

  it('signs a watch-only view as such, and ends a link with the wait it was given for', () => {
    const local = { sessionId: 's-1', liveViewUrl: 'http://127.0.0.1:8790/_local/sessions/s-1/live' };
    const watch = liveViewLinkFor(config, local, 'acme', NOW, { interactive: false }) as string;
    expect(verifyLiveViewToken(KEY, new URL(watch).searchParams.get('token'), expected, NOW)).toMatchObject({
      ok: true,
      claims: { interactive: false },
    });
    const until = NOW + 60_000;
    const takeover = liveViewLinkFor(config, local, 'acme', NOW, {
      interactive: true,
      untilMs: until,
    }) as string;
    const token = new URL(takeover).searchParams.get('token');
    expect(verifyLiveViewToken(KEY, token, expected, until - 1000).ok).toBe(true);
    expect(verifyLiveViewToken(KEY, token, expected, until)).toEqual({ ok: false, reason: 'expired' });
    // A wait already over gets no link at all.
    expect(liveViewLinkFor(config, local, 'acme', NOW, { interactive: true, untilMs: NOW })).toBe(undefined);
  });

  it('does not sign another session’s view path with this session’s id', () => {
    const link = liveViewLinkFor(
      config,
      { sessionId: 's-1', liveViewUrl: 'http://127.0.0.1:8790/_local/sessions/s-2/live' },
      'acme',
      NOW,
      { interactive: true },
    );
    expect(link).toBe('http://127.0.0.1:8790/_local/sessions/s-2/live');
  });
});

describe('Function: inputCommands', () => {
  it('turns clicks, text and special keys into CDP input', () => {
    expect(
      inputCommands({ type: 'mouse', kind: 'mousePressed', x: 10, y: 20, button: 'left', clickCount: 1 }),
    ).toEqual([
      {
        method: 'Input.dispatchMouseEvent',
        params: { type: 'mousePressed', x: 10, y: 20, button: 'left', clickCount: 1 },
      },
    ]);
    expect(inputCommands({ type: 'text', text: 'héllo' })).toEqual([
      { method: 'Input.insertText', params: { text: 'héllo' } },
    ]);
    const enter = inputCommands({ type: 'key', key: 'Enter', code: 'Enter', keyCode: 13, modifiers: 0 });
    expect(enter.map((c) => [c.params.type, c.params.text])).toEqual([
      ['keyDown', '\r'],
      ['keyUp', undefined],
    ]);
  });

  it.each([
    ['an unknown type', { type: 'eval', code: '1' }],
    ['an unknown mouse event', { type: 'mouse', kind: 'dragIntercepted', x: 1, y: 1, button: 'left' }],
    [
      'a coordinate that is not a number',
      { type: 'mouse', kind: 'mouseMoved', x: 'a', y: 1, button: 'none' },
    ],
    ['empty text', { type: 'text', text: '' }],
    ['nothing', null],
  ])('passes nothing on for %s', (_what, message) => {
    expect(inputCommands(message)).toEqual([]);
  });
});

describe('Function: tenantOf', () => {
  it('reads the tenant from the session’s tags, as a list or a record', () => {
    expect(tenantOf({ tags: ['jobId:j', 'tenantId:acme'] } as unknown as SessionRecord)).toBe('acme');
    expect(tenantOf({ tags: { tenantId: 'acme' } } as unknown as SessionRecord)).toBe('acme');
    expect(tenantOf({ tags: ['jobId:j'] } as unknown as SessionRecord)).toBe(undefined);
  });
});
