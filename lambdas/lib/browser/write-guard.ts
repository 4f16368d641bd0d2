/**
 * The write guard: what the engine does in the browser while a write step acts, so that the
 * browser's own network stack never sends the write twice unseen.
 *
 * Chromium sends a request again by itself when the connection it went out on was a reused
 * (or preconnected, idle) one and failed before a single byte of response came back: the
 * server may have committed it and reset the connection, and a site that de-duplicates
 * nothing then holds two records. That resend happens below anything a page script, the
 * DevTools `Network` domain or `page.route` sees (one request, one route call). Measured on
 * Chromium 156 over `connectOverCDP`, against HTTP/1.1 and HTTP/2 servers that commit and then
 * reset or close without a byte (`DESIGN.md`, "The guarantee"):
 *
 * - **Prevented**: each unsafe request (POST, PUT, PATCH, DELETE) is held at the request stage
 *   while the profile's socket pools are flushed (`chrome://net-internals`, in the same browser
 *   context), then continues through the browser's own network (its proxy, cookies, TLS and IP
 *   unchanged). It goes out on a brand-new connection, where Chromium never resends. Closing
 *   only the idle connections is not enough: a request in flight at that instant (the page's
 *   own fetch, a favicon) hands its connection back to the pool a moment later, and the write
 *   took it in most trials when the page had requests in flight. A flush also marks the
 *   connections in use as not to be reused and cancels pending connects (preconnects). Each
 *   flush counts only once a host lookup sent behind it on the same network context has been
 *   answered. The pools are flushed twice, 100 ms apart: what was already on its way when the
 *   hold began (requests let go a moment earlier, the navigation's own preconnect) lands after
 *   the first flush in about one write in four on a busy page; then, while the write is held
 *   or in flight, the page's other requests to its host wait. HTTP/1.1 requests in flight
 *   finish; on HTTP/2 and HTTP/3, streams in flight are cut, so the guard first waits
 *   (bounded) for the unsafe requests it let go earlier in the step to end. WebSockets stay
 *   open.
 * - **Detected**: the browser's NetLog, read over CDP tracing (category `netlog`), shows every
 *   transaction restarted after an error (`HTTP_TRANSACTION_RESTART_AFTER_ERROR`): a write the
 *   browser sent again is reported, and the engine reconciles instead of trusting the page.
 *
 * - **Refused**: once the step's committing request has gone, another one in the same step is
 *   refused (aborted, never sent) when the step commits once (`once`: every agent step, and a
 *   scripted step that names its committing request without `repeats`). A page that invites a
 *   second submit (a form still showing after its save) cannot make a write happen twice; the
 *   report lists what was refused, and the engine makes the write uncertain for its probe.
 *
 * Either part can be unavailable on a remote browser (a provider may refuse `chrome://`
 * pages, or tracing while it traces itself); the report says which ran, and the probes that
 * count what the application holds remain the last line (Finish checks every write).
 */
import type { Browser, BrowserContext, CDPSession, Page, Request, Response } from 'playwright-core';
import {
  type AnswerSeen,
  type CommitsSpec,
  committingRequest,
  type SentRequest as GuardedRequest,
  originAndPath,
  UNSAFE_METHODS,
} from '../commits.ts';
import { MAX_READ_BYTES } from './response-excerpt.ts';

export { UNSAFE_METHODS } from '../commits.ts';

/** An unsafe request the browser sent more than once by itself. */
export interface ResentRequest {
  /** Origin and path (no query: it may carry secrets). */
  url: string;
  method: string;
  /** Times it went out again after the first. */
  extra: number;
  /** The network errors that made the browser send it again (Chromium's `net_error` codes). */
  errors: number[];
}

/** What the guard did and saw during one write step. */
export interface WriteGuardReport {
  /** Each unsafe request went out on a fresh connection (the guard could close idle connections). */
  prevented: boolean;
  /** The browser's network log was read, so a resend would have been seen. */
  observed: boolean;
  /** Unsafe requests the page sent during the step. */
  unsafeRequests: number;
  /** Of those, the ones the browser sent again by itself. */
  resent: ResentRequest[];
  /** Each unsafe request the page sent, in order (the step's write and the page's own, see `classifyRequests`). */
  requests: GuardedRequest[];
  /** Committing requests refused after the step's first had gone (`once`): never sent. */
  refused: GuardedRequest[];
}

/** Which parts of the guard run: both by default (`BELAY_WRITE_GUARD`). */
export interface WriteGuardOptions {
  /** Send each unsafe request on a fresh connection. */
  prevent: boolean;
  /** Read the browser's network log for resends. */
  detect: boolean;
  /**
   * The step commits once: after the first request this test calls committing has gone, the
   * next is refused (see `commitLimit` in `commits.ts`). Absent: every request goes.
   */
  once?: { commits(method: string, url: string): boolean } | undefined;
  /**
   * The request that commits the step's write, when the step names it (`commits`): only it is
   * held for the flush; the page's other unsafe requests (a heartbeat, autosave) wait beside it
   * like any other request. Without it every unsafe request is treated as the write.
   */
  commits?: CommitsSpec | undefined;
}

/** The guard over one write step: `finish` stops it and reports. */
export interface WriteGuard {
  finish(): Promise<WriteGuardReport>;
}

/**
 * The per-connection hook the request policy (`allowlist.ts`) calls before it lets an unsafe
 * request go: set while a guard is active.
 */
export interface UnsafeRequestHook {
  /** Resolves `refuse` for a request that must not go (the policy aborts it), else once it may. */
  beforeUnsafe?: ((request: Request) => Promise<'refuse' | undefined>) | undefined;
  /** Called before any other request goes. */
  beforeOther?: ((request: Request) => Promise<void>) | undefined;
}

/** How long an unsafe request waits for the earlier ones of its step to end before the flush. */
const EARLIER_WRITES_WAIT_MS = 2_000;
/** How long another request to the host of a write waits for the write to end. */
const BESIDE_WRITE_WAIT_MS = 5_000;
/** The pause between the two flushes before an unsafe request goes. */
const SECOND_FLUSH_AFTER_MS = 100;
/** How long the end of a write step waits for the answers to its unsafe requests still in flight. */
const SETTLE_MS = 10_000;
/** How long the end of a write step waits, after the answers came, for their bodies to be read. */
const BODY_WAIT_MS = 1_000;
/** How long the flush may take to be confirmed before the request goes unprotected. */
const FLUSH_CONFIRM_MS = 2_000;

/** Starts guarding the writes of `page` (see the module's comment). Never throws: what it cannot do, it reports. */
export async function startWriteGuard(
  browser: Browser,
  page: Page,
  hook: UnsafeRequestHook,
  installHook: () => Promise<void>,
  options: WriteGuardOptions,
): Promise<WriteGuard> {
  const context = page.context();
  // The helper tab opens while the step begins: the step's first unsafe request waits for it.
  const opening = options.prevent
    ? openSocketCloser(browser, page).catch(() => undefined)
    : Promise.resolve(undefined);
  const trace = options.detect ? await startNetlogTrace(browser).catch(() => undefined) : undefined;
  const sent = new SentRequests(context);
  let unsafeRequests = 0;
  let hooked = false;
  let flushesConfirmed = true;
  let committed = false;
  const refused = new Set<Request>();
  const writes = options.prevent ? new WritesInFlight(context) : undefined;
  const isCommit = options.commits ? committingRequest(options.commits) : undefined;
  if (writes || options.once) {
    try {
      await installHook();
      hook.beforeUnsafe = async (request) => {
        // Decided before anything is held: a refused request is aborted at once, never delayed.
        if (options.once?.commits(request.method(), request.url())) {
          if (committed) {
            refused.add(request);
            return 'refuse';
          }
          committed = true;
        }
        unsafeRequests++;
        // The page's own (a heartbeat every 200 ms would otherwise queue behind flushes and hold
        // the page's reads for seconds): it waits while the write is in flight, never flushes.
        if (isCommit && !isCommit(request.method(), request.url())) {
          await writes?.besideWrites(request, BESIDE_WRITE_WAIT_MS);
          return undefined;
        }
        const closer = await opening;
        // No helper: the request goes as it would without the guard (the report says so).
        if (!closer || !writes) return undefined;
        await writes.settled(EARLIER_WRITES_WAIT_MS);
        writes.add(request);
        // Requests let go just before this one, and the preconnects its navigation started,
        // travel to the network on other channels and can land after the first flush.
        if (!(await closer.flush())) flushesConfirmed = false;
        await new Promise((resolve) => setTimeout(resolve, SECOND_FLUSH_AFTER_MS));
        if (!(await closer.flush())) flushesConfirmed = false;
        return undefined;
      };
      if (writes) hook.beforeOther = (request) => writes.besideWrites(request, BESIDE_WRITE_WAIT_MS);
      hooked = writes !== undefined;
    } catch {
      // The hook could not be installed: nothing is held, and the report says nothing was prevented.
    }
  }
  return {
    async finish(): Promise<WriteGuardReport> {
      hook.beforeUnsafe = undefined;
      hook.beforeOther = undefined;
      writes?.dispose();
      const { requests, refused: notSent } = await sent.stop(SETTLE_MS, refused);
      const closer = await opening;
      await closer?.dispose();
      const seen = trace ? await trace.stop().catch(() => undefined) : undefined;
      return {
        prevented: hooked && closer !== undefined && flushesConfirmed,
        observed: seen !== undefined,
        unsafeRequests: Math.max(
          unsafeRequests,
          (seen?.unsafeRequests ?? 0) - notSent.length,
          requests.length,
        ),
        resent: seen?.resent ?? [],
        requests,
        refused: notSent,
      };
    },
  };
}

/**
 * Every unsafe request the context's pages send while the guard runs, with the status of its
 * answer. At the end of the step it waits (bounded) for the answers of those still in flight:
 * a save the page sent in the background and that is still on its way when the step's verify
 * returned may yet commit, and whoever looks for the write next (the probe) must see it.
 */
class SentRequests {
  readonly #requests = new Map<Request, GuardedRequest>();
  readonly #waiters = new Set<() => void>();
  readonly #sent = (request: Request): void => {
    if (!UNSAFE_METHODS.has(request.method())) return;
    this.#requests.set(request, {
      method: request.method(),
      url: originAndPath(request.url()),
      at: new Date().toISOString(),
      navigation: request.isNavigationRequest(),
    });
  };
  /** The answers' bodies being read: the step's end waits for them (bounded) with the answers. */
  readonly #bodies: Promise<void>[] = [];
  readonly #answered = (response: Response): void => {
    const seen = this.#requests.get(response.request());
    if (!seen) return;
    seen.status = response.status();
    seen.response = answerSeen(response);
    // A redirect has no body to read; any other answer's body is read as it finishes.
    if (seen.status < 300 || seen.status >= 400) {
      const answer = seen.response;
      this.#bodies.push(
        response.body().then(
          (body) => {
            if (body.length > 0) answer.body = body.subarray(0, MAX_READ_BYTES);
          },
          () => undefined,
        ),
      );
    }
    this.#wake();
  };
  readonly #failed = (request: Request): void => {
    const seen = this.#requests.get(request);
    if (!seen || seen.status !== undefined) return;
    seen.failed = true;
    this.#wake();
  };

  constructor(private readonly context: BrowserContext) {
    context.on('request', this.#sent);
    context.on('response', this.#answered);
    context.on('requestfailed', this.#failed);
  }

  #wake(): void {
    for (const wake of this.#waiters) wake();
  }

  #pending(): number {
    return [...this.#requests.values()].filter((r) => r.status === undefined && !r.failed).length;
  }

  /**
   * Stops listening once the requests sent so far have an answer (or failed), or after
   * `settleMs`: the requests, and apart those of them the guard refused (never sent).
   */
  async stop(
    settleMs: number,
    refused: ReadonlySet<Request> = new Set(),
  ): Promise<{ requests: GuardedRequest[]; refused: GuardedRequest[] }> {
    this.context.off('request', this.#sent);
    const deadline = Date.now() + settleMs;
    while (this.#pending() > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, deadline - Date.now());
        this.#waiters.add(wake);
      });
    }
    this.context.off('response', this.#answered);
    this.context.off('requestfailed', this.#failed);
    // The bodies of the answers that came, for their excerpts: at most BODY_WAIT_MS more.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.#bodies),
      new Promise((resolve) => {
        timer = setTimeout(resolve, BODY_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    // Copies: a body read after this point changes nothing already reported.
    const all = [...this.#requests].map(
      ([r, seen]) => [r, { ...seen, ...(seen.response ? { response: { ...seen.response } } : {}) }] as const,
    );
    return {
      requests: all.filter(([r]) => !refused.has(r)).map(([, seen]) => seen),
      refused: all.filter(([r]) => refused.has(r)).map(([, seen]) => seen),
    };
  }
}

/**
 * The unsafe requests of a step from the moment the guard holds them until they end. While one
 * is held or in flight, the page's other requests to its host wait: a connection they opened
 * after the flush would be handed to the write as soon as they finished with it (at once when
 * the host already has its 6 connections), and the browser resends a write on a reused one.
 */
class WritesInFlight {
  readonly #writes = new Map<Request, string>();
  readonly #waiters = new Set<() => void>();
  readonly #ended = (request: Request): void => {
    if (!this.#writes.delete(request)) return;
    for (const wake of this.#waiters) wake();
  };

  constructor(private readonly context: BrowserContext) {
    context.on('requestfinished', this.#ended);
    context.on('requestfailed', this.#ended);
  }

  add(request: Request): void {
    this.#writes.set(request, hostOf(request.url()));
  }

  /** Resolves once no write is in flight, or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void> {
    return this.#until(() => this.#writes.size === 0, timeoutMs);
  }

  /** Resolves once no write to the host of `request` is in flight, or after `timeoutMs`. */
  besideWrites(request: Request, timeoutMs: number): Promise<void> {
    if (this.#writes.size === 0) return Promise.resolve();
    const host = hostOf(request.url());
    return this.#until(() => ![...this.#writes.values()].includes(host), timeoutMs);
  }

  async #until(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, deadline - Date.now());
        this.#waiters.add(wake);
      });
    }
  }

  dispose(): void {
    this.context.off('requestfinished', this.#ended);
    this.context.off('requestfailed', this.#ended);
    this.#writes.clear();
    for (const wake of this.#waiters) wake();
  }
}

/**
 * Run in the helper tab: flushes the socket pools, then sends a host lookup on the same network
 * context, answered only once the flush has run (the flush itself is sent unanswered). A string,
 * so that no bundler rewrites its `import()`.
 */
const FLUSH_AND_CONFIRM = `(async () => {
  chrome.send('flushSocketPools');
  const { sendWithPromise } = await import('chrome://resources/js/cr.js');
  return Promise.race([
    sendWithPromise('resolveHost', '127.0.0.1').then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), ${FLUSH_CONFIRM_MS})),
  ]);
})()`;

/** How long the helper tab may take to open before the write goes unprotected. */
const HELPER_OPEN_MS = 5_000;

const SOCKETS_PAGE = 'chrome://net-internals/#sockets';

/**
 * A helper tab on `chrome://net-internals` in the page's context: flushes its profile's socket
 * pools, and says whether the flush was confirmed. It opens in the background, so the page the
 * step works on stays the one in front (a person watching the live view sees no other tab);
 * where the browser refuses that, as a new page put behind the step's.
 */
async function openSocketCloser(
  browser: Browser,
  page: Page,
): Promise<{ flush(): Promise<boolean>; dispose(): Promise<void> } | undefined> {
  const context = page.context();
  let helper: Page;
  let inBackground = true;
  try {
    helper = await openInBackground(browser, context, SOCKETS_PAGE);
  } catch {
    inBackground = false;
    try {
      helper = await context.newPage();
    } finally {
      // A new page comes to the front: the step's page goes back there.
      await page.bringToFront().catch(() => undefined);
    }
  }
  try {
    // A background tab was created at the page itself: wait for it, never load it twice.
    if (inBackground) await helper.waitForURL(SOCKETS_PAGE, { timeout: HELPER_OPEN_MS });
    else await helper.goto(SOCKETS_PAGE, { timeout: HELPER_OPEN_MS });
    const usable = await helper.evaluate(
      () => typeof (globalThis as { chrome?: { send?: unknown } }).chrome?.send === 'function',
    );
    if (!usable) throw new Error('chrome://net-internals offers no chrome.send here');
  } catch {
    await helper.close().catch(() => undefined);
    return undefined;
  }
  return {
    async flush(): Promise<boolean> {
      try {
        return (await helper.evaluate(FLUSH_AND_CONFIRM)) === true;
      } catch {
        return false;
      }
    },
    dispose: () => helper.close().catch(() => undefined),
  };
}

/** A tab opened at `url` behind the others (CDP `Target.createTarget` with `background`), as a page of `context`. */
async function openInBackground(browser: Browser, context: BrowserContext, url: string): Promise<Page> {
  const session = await browser.newBrowserCDPSession();
  const created = session.send('Target.createTarget', { url, background: true });
  let stop = (): void => undefined;
  // Matched by target id: the step's page may open a tab of its own at the same moment.
  const appeared = new Promise<Page>((resolve, reject) => {
    const onPage = (candidate: Page): void => {
      void Promise.all([targetIdOf(context, candidate), created]).then(
        ([id, { targetId }]) => {
          if (id !== targetId) return;
          stop();
          resolve(candidate);
        },
        () => undefined,
      );
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the background tab did not appear in ${HELPER_OPEN_MS} ms`));
    }, HELPER_OPEN_MS);
    stop = () => {
      clearTimeout(timer);
      context.off('page', onPage);
    };
    context.on('page', onPage);
  });
  appeared.catch(() => undefined);
  try {
    await created;
    return await appeared;
  } catch (err) {
    stop();
    const made = await created.catch(() => undefined);
    if (made) await session.send('Target.closeTarget', { targetId: made.targetId }).catch(() => undefined);
    throw err;
  } finally {
    await session.detach().catch(() => undefined);
  }
}

async function targetIdOf(context: BrowserContext, page: Page): Promise<string | undefined> {
  const session = await context.newCDPSession(page);
  try {
    return (await session.send('Target.getTargetInfo')).targetInfo.targetId;
  } finally {
    await session.detach().catch(() => undefined);
  }
}

interface NetlogTrace {
  stop(): Promise<{ unsafeRequests: number; resent: ResentRequest[] }>;
}

interface TraceEvent {
  cat?: string;
  name?: string;
  ph?: string;
  ts?: number;
  pid?: number;
  id?: string;
  id2?: { local?: string; global?: string };
  args?: { source_type?: string; params?: Record<string, unknown> };
}

/** Browser-wide tracing of the NetLog (one tracing client per browser: refused when another traces). */
async function startNetlogTrace(browser: Browser): Promise<NetlogTrace | undefined> {
  let session: CDPSession;
  try {
    session = await browser.newBrowserCDPSession();
  } catch {
    return undefined;
  }
  try {
    await session.send('Tracing.start', {
      transferMode: 'ReturnAsStream',
      traceConfig: {
        recordMode: 'recordAsMuchAsPossible',
        includedCategories: ['netlog'],
        excludedCategories: ['*'],
      },
    });
  } catch {
    await session.detach().catch(() => undefined);
    return undefined;
  }
  return {
    async stop() {
      try {
        const complete = new Promise<{ stream?: string }>((resolve) =>
          session.once('Tracing.tracingComplete', (e) => resolve(e as { stream?: string })),
        );
        await session.send('Tracing.end');
        const { stream } = await complete;
        if (!stream) throw new Error('tracing returned no stream');
        let text = '';
        for (;;) {
          const chunk = await session.send('IO.read', { handle: stream, size: 1 << 20 });
          text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString('utf8') : chunk.data;
          if (chunk.eof) break;
        }
        await session.send('IO.close', { handle: stream }).catch(() => undefined);
        return resendsIn(JSON.parse(text) as { traceEvents?: TraceEvent[] } | TraceEvent[]);
      } finally {
        await session.detach().catch(() => undefined);
      }
    },
  };
}

/**
 * The unsafe requests of a NetLog trace, and those the browser sent again: a URL request
 * whose HTTP transaction restarted after a network error went out once more each time.
 */
export function resendsIn(trace: { traceEvents?: TraceEvent[] } | TraceEvent[]): {
  unsafeRequests: number;
  resent: ResentRequest[];
} {
  const events = (Array.isArray(trace) ? trace : (trace.traceEvents ?? []))
    .filter((e) => e.cat === 'netlog' && e.args?.source_type === 'URL_REQUEST')
    .sort((a, b) => (a.ts ?? 0) - (b.ts ?? 0));
  const requests = new Map<string, { url: string; method: string; errors: number[] }>();
  for (const e of events) {
    const params = e.args?.params ?? {};
    // Trace ids are recycled between requests; the source's start time makes the key unique.
    const id = `${e.pid}:${e.id2?.local ?? e.id2?.global ?? e.id}:${String(params.source_start_time)}`;
    let request = requests.get(id);
    if (!request) {
      request = { url: '', method: '', errors: [] };
      requests.set(id, request);
    }
    if (e.name === 'URL_REQUEST_START_JOB' && typeof params.url === 'string' && !request.url) {
      request.url = params.url;
      request.method = typeof params.method === 'string' ? params.method : '';
    }
    if (e.name === 'HTTP_TRANSACTION_RESTART_AFTER_ERROR' && typeof params.net_error === 'number') {
      request.errors.push(params.net_error);
    }
  }
  const unsafe = [...requests.values()].filter((r) => r.url && UNSAFE_METHODS.has(r.method));
  return {
    unsafeRequests: unsafe.length,
    resent: unsafe
      .filter((r) => r.errors.length > 0)
      .map((r) => ({
        url: originAndPath(r.url),
        method: r.method,
        extra: r.errors.length,
        errors: r.errors,
      })),
  };
}

/** An answer's media type and, for a redirect, where it sends the page (origin and path: a query may carry secrets). */
function answerSeen(response: Response): AnswerSeen {
  const headers = response.headers();
  const seen: AnswerSeen = {};
  const type = headers['content-type']?.split(';')[0]?.trim();
  if (type) seen.contentType = type;
  const status = response.status();
  if (status >= 300 && status < 400 && headers.location) {
    try {
      seen.location = originAndPath(new URL(headers.location, response.url()).href);
    } catch {
      // An unreadable Location says nothing worth keeping.
    }
  }
  return seen;
}

/** Scheme, host and port: what the browser's connections are pooled by. */
function hostOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
