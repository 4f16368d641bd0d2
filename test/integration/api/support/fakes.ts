import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { registered } from '../../../../lambdas/lib/accounts/file-secret-store.ts';
import type { WritableSecretStore } from '../../../../lambdas/lib/accounts/types.ts';
import { SessionGoneError } from '../../../../lambdas/lib/browser/errors.ts';
import type { Attached, BrowserAdapter, OpenSessionOptions } from '../../../../lambdas/lib/browser/types.ts';
import { NO_VOLUMES } from '../../../../lambdas/lib/browser/volumes.ts';
import type { Application, Credentials, Playbook, Step } from '../../../../lambdas/lib/playbooks/contract.ts';
import { PersonAskedError } from '../../../../lambdas/lib/playbooks/errors.ts';
import { createPlaybookRegistry, type PlaybookRegistry } from '../../../../lambdas/lib/playbooks/registry.ts';

/**
 * The browser side of the API tests, in memory: a browser adapter whose sessions are
 * records (with a signed-in flag per session) and a two-step test playbook that works on
 * them. The API, the ledger, the state machine and its handlers are the real ones; only the
 * remote Chromium and the target site are stood in for.
 */

export const GOOD_CODE = '424242';

export interface FakeSession {
  sessionId: string;
  tags: Record<string, string>;
  signedIn: boolean;
  ended: boolean;
}

/** The page a step sees: which session it belongs to. */
interface FakePage {
  sessionId: string;
}

export interface FakeWorld {
  browser: BrowserAdapter;
  sessions: Map<string, FakeSession>;
  /** Orders placed, by idempotency key (the write's effect in the "application"). */
  orders: Map<string, string>;
  /** Jobs whose first precondition shows a changed layout (a review). */
  layoutGlitch: Set<string>;
  /** Jobs whose first step asks its requester a question first (as an agent step's `ask_person`). */
  asks: Set<string>;
  /** The answer each asking job's step read when it ran again. */
  answers: Map<string, string>;
  sessionOf(jobId: string): FakeSession | undefined;
}

export function createFakeWorld(): FakeWorld {
  const sessions = new Map<string, FakeSession>();
  const orders = new Map<string, string>();
  const layoutGlitch = new Set<string>();
  const asks = new Set<string>();
  const answers = new Map<string, string>();
  let next = 0;
  const live = (sessionId: string): FakeSession => {
    const s = sessions.get(sessionId);
    if (!s || s.ended)
      throw new SessionGoneError(`session ${sessionId} is gone`, { sessionId, status: 'completed' });
    return s;
  };
  const browser: BrowserAdapter = {
    volumes: NO_VOLUMES,
    async openSession(options: OpenSessionOptions) {
      const sessionId = `sess_${++next}_${Math.random().toString(36).slice(2, 8)}`;
      const tags = options.tags ?? {};
      // Jobs whose id starts with "mfa-" meet a signed-out account that needs a one-time code;
      // "loop-" jobs a signed-out account whose sign-in reports success but never holds.
      const signedOut = tags.jobId?.startsWith('mfa-') || tags.jobId?.startsWith('loop-');
      sessions.set(sessionId, { sessionId, tags, signedIn: !signedOut, ended: false });
      return { sessionId, cdpUrl: `ws://127.0.0.1:9/${sessionId}` };
    },
    async attach(sessionId): Promise<Attached> {
      live(sessionId);
      const page: FakePage = { sessionId };
      return {
        sessionId,
        browser: { isConnected: () => true } as unknown as Browser,
        page: page as unknown as Page,
        reused: false,
        blockedRequests: () => [],
        // No network here: nothing is held, nothing is seen.
        refuseWrites: async () => ({ end: () => [] }),
        guardWrites: async () => ({
          finish: async () => ({
            prevented: false,
            observed: false,
            unsafeRequests: 0,
            resent: [],
            requests: [],
            refused: [],
          }),
        }),
      };
    },
    async detach() {},
    async endSession(sessionId) {
      const s = sessions.get(sessionId);
      if (s) s.ended = true;
    },
    liveViewLink: () => undefined,
    revokeLiveViews: async () => undefined,
    async runningSessions(tags) {
      return [...sessions.values()]
        .filter((s) => !s.ended && Object.entries(tags).every(([k, v]) => s.tags[k] === v))
        .map((s) => s.sessionId);
    },
    async isAlive(sessionId) {
      const s = sessions.get(sessionId);
      return s !== undefined && !s.ended;
    },
    async usage() {
      return { proxyBytes: 0, modelTokens: 0 };
    },
  };
  return {
    browser,
    sessions,
    orders,
    layoutGlitch,
    asks,
    answers,
    sessionOf: (jobId) => [...sessions.values()].reverse().find((s) => s.tags.jobId === jobId),
  };
}

export const TestInputsSchema = z
  .object({
    sku: z.string().regex(/^[A-Z]{3}-\d{3}$/, 'a SKU such as MUG-001'),
    quantity: z.number().int().min(1).max(9),
    note: z.string().max(200).optional(),
  })
  .strict();
type TestInputs = z.infer<typeof TestInputsSchema>;

/** The two-step playbook `test-order@1` (shop): open the cart (read), place the order (write, approved first). */
export function testPlaybook(world: FakeWorld): Playbook {
  const session = (page: Page): FakeSession => {
    const s = world.sessions.get((page as unknown as FakePage).sessionId);
    if (!s || s.ended)
      throw new SessionGoneError('gone', { sessionId: (page as unknown as FakePage).sessionId });
    return s;
  };
  const shop: Application = {
    name: 'shop',
    isSignedOut: async (page) => !session(page).signedIn,
    signIn: async (page) =>
      session(page).signedIn || session(page).tags.jobId?.startsWith('loop-')
        ? { status: 'signed_in' }
        : { status: 'mfa_required', detail: 'the shop sent a code by SMS' },
    submitOneTimeCode: async (page, _ctx, code) => {
      if (code !== GOOD_CODE) return { status: 'mfa_required', detail: 'wrong code' };
      session(page).signedIn = true;
      return { status: 'signed_in' };
    },
  };
  const openCart: Step<TestInputs> = {
    id: 'open-cart',
    title: 'Open the cart',
    kind: 'read',
    app: 'shop',
    precondition: async (page, ctx) => {
      if (!session(page).signedIn) return { ok: false, reason: 'signed_out', detail: 'sign-in form shown' };
      if (world.layoutGlitch.delete(ctx.jobId))
        return { ok: false, reason: 'layout_changed', detail: 'no cart button' };
      return { ok: true };
    },
    restore: async () => {},
    run: async (_page, ctx) => {
      if (!world.asks.has(ctx.jobId)) return;
      // As an agent step asks: the question in the step's record, then the wait; the answer comes back in the record.
      const answer = ctx.actions.recorded().find((r) => r.type === 'answer');
      if (answer) {
        world.answers.set(ctx.jobId, String(answer.detail.answer));
        return;
      }
      const question = 'Which colour of mug: blue or grey?';
      await ctx.actions.record({
        type: 'action-chosen',
        detail: { n: 1, action: { name: 'ask_person', question }, source: 'model' },
      });
      throw new PersonAskedError('open-cart', question);
    },
    verify: async (_page, ctx) => ({ sku: ctx.inputs.sku, quantity: ctx.inputs.quantity }),
  };
  const placeOrder: Step<TestInputs> = {
    id: 'place-order',
    title: 'Place the order',
    kind: 'write',
    app: 'shop',
    needsApproval: true,
    precondition: async (page) =>
      session(page).signedIn
        ? { ok: true }
        : { ok: false, reason: 'signed_out', detail: 'sign-in form shown' },
    restore: async () => {},
    run: async (_page, ctx) => {
      if (!world.orders.has(ctx.idempotencyKey))
        world.orders.set(ctx.idempotencyKey, `ord_${world.orders.size + 1}`);
    },
    verify: async (_page, ctx) => {
      const id = world.orders.get(ctx.idempotencyKey);
      return id ? { orderId: id, card: '4242 4242 4242 4242' } : null;
    },
    probe: async (_page, ctx) => {
      const id = world.orders.get(ctx.idempotencyKey);
      return id ? { status: 'done', evidence: { orderId: id } } : { status: 'absent' };
    },
  };
  return {
    name: 'test-order',
    version: 1,
    id: 'test-order@1',
    description: 'Open the cart and place the order (tests).',
    inputSchema: TestInputsSchema,
    applications: { shop },
    steps: [openCart, placeOrder] as unknown as Step[],
  } as unknown as Playbook;
}

/** A registry with just the test playbook. */
export function testPlaybooks(world: FakeWorld): PlaybookRegistry {
  return createPlaybookRegistry([
    { playbook: testPlaybook(world), source: 'test/integration/api/support/fakes.ts' },
  ]);
}

/**
 * An in-memory credential store for the API test stack: what the accounts routes put is what
 * the engine reads; an account with nothing stored signs in as `fallback`.
 */
export function memorySecretStore(fallback: Credentials): WritableSecretStore {
  const stored = new Map<string, Credentials>();
  const key = (tenantId: string, accountId: string): string => `${tenantId}/${accountId}`;
  return {
    // As the real stores do: credentials a store holds are registered for redaction.
    getCredentials: async (tenantId, accountId) =>
      registered(tenantId, stored.get(key(tenantId, accountId)) ?? fallback),
    putCredentials: async (tenantId, accountId, credentials) => {
      stored.set(key(tenantId, accountId), credentials);
      registered(tenantId, credentials);
    },
    deleteCredentials: async (tenantId, accountId) => {
      stored.delete(key(tenantId, accountId));
    },
  };
}
