/**
 * The write guard's start and report when a part of it is off (`BELAY_WRITE_GUARD`), against
 * a scripted browser: a part that is off costs the write step no round trip to the browser; the
 * helper tab opens in the background while the step begins; a step that commits once has its
 * second committing request refused.
 */
import type { Browser, Page, Request } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { startWriteGuard, type UnsafeRequestHook } from '../../../lambdas/lib/browser/write-guard.ts';
import { commitLimit } from '../../../lambdas/lib/commits.ts';

function scripted() {
  const context = {
    newPage: vi.fn(async () => Promise.reject(new Error('no tab'))),
    on: vi.fn(),
    off: vi.fn(),
  };
  const page = { context: () => context, bringToFront: vi.fn(async () => undefined) };
  const browser = { newBrowserCDPSession: vi.fn(async () => Promise.reject(new Error('no CDP'))) };
  return { context, page, browser };
}

describe('Function: startWriteGuard', () => {
  it('touches neither the page nor the browser when both parts are off, and reports neither ran', async () => {
    const { context, page, browser } = scripted();
    const installHook = vi.fn(async () => undefined);
    const hook = {};
    const guard = await startWriteGuard(
      browser as unknown as Browser,
      page as unknown as Page,
      hook,
      installHook,
      { prevent: false, detect: false },
    );
    expect(await guard.finish()).toEqual({
      prevented: false,
      observed: false,
      unsafeRequests: 0,
      resent: [],
      requests: [],
      refused: [],
    });
    expect(context.newPage).not.toHaveBeenCalled();
    expect(browser.newBrowserCDPSession).not.toHaveBeenCalled();
    expect(installHook).not.toHaveBeenCalled();
    expect(page.bringToFront).not.toHaveBeenCalled();
  });

  it("lists the page's unsafe requests with their answers (a navigation apart), and no other request", async () => {
    const listeners = new Map<string, Set<(x: unknown) => void>>();
    const context = {
      newPage: vi.fn(),
      on: (event: string, l: (x: unknown) => void) => {
        listeners.set(event, (listeners.get(event) ?? new Set()).add(l));
      },
      off: (event: string, l: (x: unknown) => void) => listeners.get(event)?.delete(l),
    };
    const emit = (event: string, x: unknown): void => {
      for (const l of listeners.get(event) ?? []) l(x);
    };
    const request = (method: string, url: string, navigation = false) => ({
      method: () => method,
      url: () => url,
      isNavigationRequest: () => navigation,
    });
    const page = { context: () => context };
    const guard = await startWriteGuard({} as Browser, page as unknown as Page, {}, async () => undefined, {
      prevent: false,
      detect: false,
    });
    const save = request('POST', 'http://127.0.0.1:9/save?token=secret', true);
    const beat = request('POST', 'http://127.0.0.1:9/heartbeat');
    const api = request('PUT', 'http://127.0.0.1:9/api/item');
    emit('request', request('GET', 'http://127.0.0.1:9/list'));
    emit('request', beat);
    emit('request', save);
    emit('request', api);
    emit('requestfailed', beat);
    // An answer with a body: it is kept for the write's excerpt.
    emit('response', {
      request: () => api,
      status: () => 200,
      url: () => 'http://127.0.0.1:9/api/item',
      headers: () => ({ 'content-type': 'application/json; charset=utf-8' }),
      body: async () => Buffer.from('{"id":"I-1"}'),
    });
    // The save is still on its way as the step ends: the report waits for its answer.
    const finished = guard.finish();
    await new Promise((r) => setTimeout(r, 50));
    emit('request', request('POST', 'http://127.0.0.1:9/later'));
    // A redirect: where it sends the page is kept (no query), and no body is read.
    emit('response', {
      request: () => save,
      status: () => 303,
      url: () => 'http://127.0.0.1:9/save?token=secret',
      headers: () => ({ location: '/orders/O-1?token=secret', 'content-type': 'text/html' }),
      body: async () => {
        throw new Error('Response body is unavailable for redirect responses');
      },
    });
    const report = await finished;
    expect(report.requests).toEqual([
      {
        method: 'POST',
        url: 'http://127.0.0.1:9/heartbeat',
        at: expect.any(String),
        navigation: false,
        failed: true,
      },
      {
        method: 'POST',
        url: 'http://127.0.0.1:9/save',
        at: expect.any(String),
        navigation: true,
        status: 303,
        response: { contentType: 'text/html', location: 'http://127.0.0.1:9/orders/O-1' },
      },
      {
        method: 'PUT',
        url: 'http://127.0.0.1:9/api/item',
        at: expect.any(String),
        navigation: false,
        status: 200,
        response: { contentType: 'application/json', body: Buffer.from('{"id":"I-1"}') },
      },
    ]);
    expect(report.unsafeRequests).toBe(3);
    // Stopped: what the page sends afterwards is no part of the step.
    expect(listeners.get('request')?.size ?? 0).toBe(0);
  });

  it('refuses (never delays) a second committing request of a step that commits once, and reports it', async () => {
    const listeners = new Map<string, Set<(x: unknown) => void>>();
    const context = {
      on: (event: string, l: (x: unknown) => void) => {
        listeners.set(event, (listeners.get(event) ?? new Set()).add(l));
      },
      off: (event: string, l: (x: unknown) => void) => listeners.get(event)?.delete(l),
    };
    const emit = (event: string, x: unknown): void => {
      for (const l of listeners.get(event) ?? []) l(x);
    };
    const request = (method: string, url: string) => ({
      method: () => method,
      url: () => url,
      isNavigationRequest: () => false,
    });
    const installHook = vi.fn(async () => undefined);
    const hook: UnsafeRequestHook = {};
    const once = commitLimit({ kind: 'write', commits: { method: 'POST', path: '^/api/save$' } });
    expect(once).toBeDefined();
    const guard = await startWriteGuard(
      {} as Browser,
      { context: () => context } as unknown as Page,
      hook,
      installHook,
      { prevent: false, detect: false, ...once },
    );
    expect(installHook).toHaveBeenCalledTimes(1);
    const first = request('POST', 'http://127.0.0.1:9/api/save');
    const beat = request('POST', 'http://127.0.0.1:9/api/heartbeat');
    const second = request('POST', 'http://127.0.0.1:9/api/save');
    const verdicts: unknown[] = [];
    for (const r of [first, beat, second, beat]) {
      emit('request', r);
      verdicts.push(await hook.beforeUnsafe?.(r as unknown as Request));
    }
    expect(verdicts).toEqual([undefined, undefined, 'refuse', undefined]);
    const answer = (r: unknown, status: number) => ({
      request: () => r,
      status: () => status,
      url: () => (r as { url: () => string }).url(),
      headers: () => ({ 'content-type': 'application/json' }),
      body: async () => Buffer.from('{}'),
    });
    emit('response', answer(first, 201));
    emit('response', answer(beat, 200));
    emit('requestfailed', second);
    const report = await guard.finish();
    expect(report.refused).toEqual([
      expect.objectContaining({ method: 'POST', url: 'http://127.0.0.1:9/api/save' }),
    ]);
    expect(report.requests.map((r) => r.url)).toEqual([
      'http://127.0.0.1:9/api/save',
      'http://127.0.0.1:9/api/heartbeat',
    ]);
    expect(hook.beforeUnsafe).toBeUndefined();
  });

  it.each([
    ['an agent step, any unsafe request', { kind: 'write', agent: {} }, true],
    ['a script that names its committing request', { kind: 'write', commits: { path: '^/a$' } }, true],
    ['a script that says nothing (it may post twice)', { kind: 'write' }, false],
    [
      'a request sent more than once on purpose',
      { kind: 'write', agent: {}, commits: { path: '^/a$', repeats: true } },
      false,
    ],
    ['a read', { kind: 'read', agent: {} }, false],
  ])('commits once: %s -> %s', (_what, step, limited) => {
    expect(commitLimit(step) !== undefined).toBe(limited);
  });

  it('without a background tab (CDP refused), opens the helper as a new page and brings the step’s page back to the front', async () => {
    const { context, page, browser } = scripted();
    const guard = await startWriteGuard(
      browser as unknown as Browser,
      page as unknown as Page,
      {},
      async () => undefined,
      { prevent: true, detect: false },
    );
    const report = await guard.finish();
    expect(browser.newBrowserCDPSession).toHaveBeenCalledTimes(1);
    expect(context.newPage).toHaveBeenCalledTimes(1);
    expect(page.bringToFront).toHaveBeenCalledTimes(1);
    // The helper tab could not be opened: nothing was prevented, and the report says so.
    expect(report).toMatchObject({ prevented: false, observed: false });
  });

  it('opens the helper in the background while the step begins; the first unsafe request waits for it and its flushes', async () => {
    const { order, helper, context, page, browser, appear } = backgroundHelper();
    const hook: { beforeUnsafe?: (r: unknown) => Promise<void> } = {};
    const guard = await startWriteGuard(
      browser as unknown as Browser,
      page as unknown as Page,
      hook as never,
      async () => undefined,
      { prevent: true, detect: false },
    );
    const held = hook.beforeUnsafe?.({ url: () => 'https://shop.example/order' });
    let released = false;
    void held?.then(() => {
      released = true;
      order.push('released');
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(released).toBe(false);
    appear();
    await held;
    expect(order).toEqual(['flush', 'flush', 'released']);
    expect(await guard.finish()).toMatchObject({ prevented: true, unsafeRequests: 1 });
    // Never in front: the step's page was not touched, no page was opened the usual way.
    expect(page.bringToFront).not.toHaveBeenCalled();
    expect(context.newPage).not.toHaveBeenCalled();
    expect(helper.close).toHaveBeenCalledTimes(1);
    // Created at the sockets page: waited for, not loaded a second time.
    expect(helper.waitForURL).toHaveBeenCalledWith('chrome://net-internals/#sockets', expect.anything());
  });

  it("when the step names its commit, flushes for that request only: the page's heartbeat goes without waiting", async () => {
    const { order, page, browser, appear } = backgroundHelper();
    const hook: { beforeUnsafe?: (r: unknown) => Promise<void> } = {};
    const guard = await startWriteGuard(
      browser as unknown as Browser,
      page as unknown as Page,
      hook as never,
      async () => undefined,
      { prevent: true, detect: false, commits: { method: 'POST', path: '^/order$' } },
    );
    const request = (method: string, url: string) => ({ method: () => method, url: () => url });
    // Before the helper tab is even there: the heartbeat does not wait for it.
    await hook.beforeUnsafe?.(request('POST', 'https://shop.example/heartbeat'));
    order.push('heartbeat');
    const held = hook.beforeUnsafe?.(request('POST', 'https://shop.example/order'));
    await new Promise((r) => setTimeout(r, 20));
    appear();
    await held;
    order.push('order');
    expect(order).toEqual(['heartbeat', 'flush', 'flush', 'order']);
    // Both counted as the page's unsafe requests; the guard prevented what it had to.
    expect(await guard.finish()).toMatchObject({ prevented: true, unsafeRequests: 2 });
  });
});

/**
 * A browser whose helper tab is created in the background (`Target.createTarget`) and shows up
 * as a page only when `appear` is called; each flush the guard runs in it is logged in `order`.
 */
function backgroundHelper() {
  const order: string[] = [];
  const listeners = new Set<(p: unknown) => void>();
  const helper = {
    url: () => 'chrome://net-internals/#sockets',
    waitForURL: vi.fn(async () => undefined),
    evaluate: vi.fn(async (fn: unknown) => {
      if (typeof fn === 'string') order.push('flush');
      return true;
    }),
    close: vi.fn(async () => undefined),
  };
  const context = {
    newPage: vi.fn(),
    on: (event: string, l: (p: unknown) => void) => (event === 'page' ? listeners.add(l) : undefined),
    off: (_: string, l: (p: unknown) => void) => listeners.delete(l),
    newCDPSession: async () => ({
      send: async () => ({ targetInfo: { targetId: 'helper-1' } }),
      detach: async () => undefined,
    }),
  };
  const page = { context: () => context, bringToFront: vi.fn(async () => undefined) };
  let created = false;
  const browser = {
    newBrowserCDPSession: vi.fn(async () => ({
      send: vi.fn(async (method: string, params: { background?: boolean }) => {
        expect(method).toBe('Target.createTarget');
        expect(params.background).toBe(true);
        created = true;
        return { targetId: 'helper-1' };
      }),
      detach: async () => undefined,
    })),
  };
  // The tab shows up as a page only after it was created, later than the guard's return.
  const appear = (): void => {
    expect(created).toBe(true);
    for (const l of [...listeners]) l(helper);
  };
  return { order, helper, context, page, browser, appear };
}
