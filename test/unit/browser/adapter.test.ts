/**
 * The adapter's pure parts: the allowlist, the CDP URL, and the translation of SDK and
 * connect failures into the browser layer's errors. No network.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from 'anchorbrowser';
import { getCdpUrl } from 'anchorbrowser/lib/browser';
import { describe, expect, it } from 'vitest';
import { browserAdapterFromEnv, sessionCdpUrl } from '../../../lambdas/lib/browser/adapter.ts';
import { isAllowedUrl, redactUrl } from '../../../lambdas/lib/browser/allowlist.ts';
import {
  BrowserConfigError,
  BrowserRequestError,
  SessionGoneError,
  SessionUnavailableError,
} from '../../../lambdas/lib/browser/errors.ts';
import {
  classifyConnectFailure,
  isTerminalStatus,
  translateApiError,
} from '../../../lambdas/lib/browser/translate.ts';

const headers = new Headers();

describe('Function: isAllowedUrl', () => {
  it.each([
    ['https://shop.example/cart?x=1', ['shop.example'], true],
    ['https://evil.example/', ['shop.example'], false],
    ['https://a.shop.example/', ['*.shop.example'], true],
    ['https://shop.example/', ['*.shop.example'], false],
    ['https://notshop.example/', ['*.shop.example'], false],
    ['http://127.0.0.1:8080/x', ['127.0.0.1:8080'], true],
    ['http://127.0.0.1:9090/x', ['127.0.0.1:8080'], false],
    ['http://127.0.0.1:9090/x', ['127.0.0.1'], true],
    ['https://SHOP.example/', ['shop.EXAMPLE'], true],
    ['https://shop.example/', ['shop.example:443'], true],
    ['about:blank', ['shop.example'], true],
    ['data:text/html,hi', ['shop.example'], true],
    ['blob:https://shop.example/uuid', ['other.example'], true],
    ['file:///etc/passwd', ['shop.example'], false],
    ['not a url', ['shop.example'], false],
    ['https://anything.example/', [], true],
  ])('%s with %j -> %s', (url, allowed, expected) => {
    expect(isAllowedUrl(url, allowed)).toBe(expected);
  });

  it('redacts query strings and fragments from reports', () => {
    expect(redactUrl('https://shop.example/pay?card=4111#x')).toBe('https://shop.example/pay');
    expect(redactUrl('data:text/html,secret')).toBe('data:...');
  });
});

describe('Function: sessionCdpUrl', () => {
  it.each(['https://api.anchorbrowser.io', 'http://127.0.0.1:8790'])('matches the SDK for %s', (base) => {
    expect(sessionCdpUrl(base, 'sess-1', 'key-1')).toBe(getCdpUrl(base, 'sess-1', 'key-1'));
  });
});

describe('Function: translateApiError', () => {
  it.each([
    [new NotFoundError(404, { error: { code: 404 } }, undefined, headers), 'retrieve', SessionGoneError],
    [new NotFoundError(404, {}, undefined, headers), 'create', BrowserRequestError],
    [new InternalServerError(503, {}, undefined, headers), 'retrieve', SessionUnavailableError],
    [new RateLimitError(429, {}, undefined, headers), 'create', SessionUnavailableError],
    [new APIConnectionError({ message: 'refused' }), 'delete', SessionUnavailableError],
    [new APIConnectionTimeoutError(), 'create', SessionUnavailableError],
    [new AuthenticationError(401, {}, undefined, headers), 'retrieve', BrowserRequestError],
    [new BadRequestError(400, {}, undefined, headers), 'create', BrowserRequestError],
  ] as const)('%s on %s -> %o', (err, operation, expected) => {
    const translated = translateApiError(err, operation, operation === 'create' ? undefined : 'sess-1');
    expect(translated).toBeInstanceOf(expected);
    expect(translated.cause).toBe(err);
  });

  it('passes non-SDK errors through unchanged', () => {
    const err = new TypeError('bug');
    expect(translateApiError(err, 'retrieve', 's')).toBe(err);
  });

  it('knows terminal statuses', () => {
    expect([isTerminalStatus('completed'), isTerminalStatus('FAILED'), isTerminalStatus('running')]).toEqual([
      true,
      true,
      false,
    ]);
  });
});

describe('Function: classifyConnectFailure', () => {
  const refused = (status: number): Error => new Error(`WebSocket error: ws://h/ ${status} Not Found`);
  const notFound = (): Promise<string> => Promise.reject(new NotFoundError(404, {}, undefined, headers));
  const down = (): Promise<string> => Promise.reject(new APIConnectionError({ message: 'ECONNREFUSED' }));

  it.each([
    ['the API says 404', new Error('boom'), notFound, SessionGoneError],
    ['the API says completed', new Error('boom'), () => Promise.resolve('completed'), SessionGoneError],
    ['the endpoint refuses with 404', refused(404), () => Promise.resolve('running'), SessionGoneError],
    ['the endpoint refuses with 404 and the API is down', refused(404), down, SessionGoneError],
    [
      'running but unreachable',
      new Error('ECONNRESET'),
      () => Promise.resolve('running'),
      SessionUnavailableError,
    ],
    ['the API is down', new Error('ECONNREFUSED'), down, SessionUnavailableError],
    ['the endpoint refuses the key', refused(401), () => Promise.resolve('running'), BrowserRequestError],
  ])('%s', async (_what, err, lookup, expected) => {
    expect(await classifyConnectFailure('sess-1', err, lookup)).toBeInstanceOf(expected);
  });
});

describe('Function: browserAdapterFromEnv', () => {
  it('names the missing variable', () => {
    expect(() => browserAdapterFromEnv({})).toThrow(BrowserConfigError);
    expect(() => browserAdapterFromEnv({})).toThrow(/ANCHORBROWSER_API_KEY/);
  });

  it('builds an adapter from the key alone', () => {
    expect(typeof browserAdapterFromEnv({ ANCHORBROWSER_API_KEY: 'k' }).attach).toBe('function');
  });
});
