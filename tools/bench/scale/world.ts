/**
 * The stand-in for the browser layer in the load simulation, at the adapter: a scripted
 * in-process `BrowserAdapter` (sessions are records, pages are tokens) and `checkout@1`'s
 * fourteen steps, same ids, kinds, application and approval, whose work is a short pause and
 * whose one write is recorded in an in-memory "shop" (so a probe finds it).
 *
 * Why a stand-in is right here: the subject is the coordinator (the state machine, the handler
 * cores, the ledger, the leases), and the engine does the same work around a step whatever the
 * step does in its page: the same reads, intent, checkpoint transaction, states and invocations.
 * Chromium costs ~250 MiB and a CPU-second per browser; a thousand would measure this machine,
 * not Belay. A scripted page that the real playbook's selectors could run against would add a
 * fake DOM to maintain and still no real browser, so the steps are scripted instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { SessionGoneError } from '../../../lambdas/lib/browser/errors.ts';
import type { Attached, BrowserAdapter, OpenSessionOptions } from '../../../lambdas/lib/browser/types.ts';
import { NO_VOLUMES } from '../../../lambdas/lib/browser/volumes.ts';
import type { Evidence } from '../../../lambdas/lib/ledger/types.ts';
import type { Application, Playbook, Step } from '../../../lambdas/lib/playbooks/contract.ts';
import { createPlaybookRegistry, type PlaybookRegistry } from '../../../lambdas/lib/playbooks/registry.ts';
import { checkoutPlaybook } from '../../../playbooks/checkout/index.ts';

export interface ScriptedWorldOptions {
  /** Time one step's work takes (its page actions), ms. */
  stepMs: number;
  /** Time a new session takes to come up, ms. */
  openSessionMs: number;
}

/** The scripted sessions and the shop's record of placed orders. */
export interface ScriptedWorld {
  browser: BrowserAdapter;
  playbooks: PlaybookRegistry;
  /** Orders placed, by idempotency key: a second order for one key is a duplicated side effect. */
  orders: Map<string, number>;
  sessionsOpened(): number;
  sessionsLive(): number;
}

/** The page a scripted step sees: which session it belongs to. */
interface ScriptedPage {
  sessionId: string;
}

export function createScriptedWorld(options: ScriptedWorldOptions): ScriptedWorld {
  const sessions = new Map<string, { ended: boolean }>();
  const orders = new Map<string, number>();
  let opened = 0;
  const jitter = (ms: number): number => ms * (0.5 + Math.random());

  const browser: BrowserAdapter = {
    volumes: NO_VOLUMES,
    async openSession(_options: OpenSessionOptions) {
      opened += 1;
      const sessionId = `scripted_${opened}`;
      await sleep(jitter(options.openSessionMs));
      sessions.set(sessionId, { ended: false });
      return { sessionId, cdpUrl: `ws://scripted/${sessionId}` };
    },
    async attach(sessionId): Promise<Attached> {
      const s = sessions.get(sessionId);
      if (!s || s.ended) throw new SessionGoneError(`session ${sessionId} is gone`, { sessionId });
      const page: ScriptedPage = { sessionId };
      return {
        sessionId,
        browser: { isConnected: () => true } as unknown as Browser,
        page: page as unknown as Page,
        reused: true,
        blockedRequests: () => [],
        // A scripted page sends no request: the guard has nothing to hold or to see.
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
    // Scripted sessions are never orphaned: each job's session is the one it recorded.
    liveViewLink: () => undefined,
    revokeLiveViews: async () => undefined,
    async runningSessions() {
      return [];
    },
    async endSession(sessionId) {
      const s = sessions.get(sessionId);
      if (s) s.ended = true;
    },
    async isAlive(sessionId) {
      return sessions.get(sessionId)?.ended === false;
    },
    async usage() {
      return { proxyBytes: 0, modelTokens: 0 };
    },
  };

  const shop: Application = {
    name: 'shop',
    isSignedOut: async () => false,
    signIn: async () => ({ status: 'signed_in' }),
    submitOneTimeCode: async () => ({ status: 'signed_in' }),
  };

  // checkout@1's steps as the engine sees them, the work scripted.
  const steps: Step[] = checkoutPlaybook.steps.map((real): Step => {
    const placed = (key: string): Evidence | null => (orders.has(key) ? { orderFor: key } : null);
    const step: Step = {
      id: real.id,
      title: real.title,
      kind: real.kind,
      app: real.app,
      ...(real.needsApproval ? { needsApproval: true } : {}),
      precondition: async () => ({ ok: true }),
      restore: async () => {},
      run: async (_page, ctx) => {
        await sleep(jitter(options.stepMs));
        if (real.kind === 'write') orders.set(ctx.idempotencyKey, (orders.get(ctx.idempotencyKey) ?? 0) + 1);
      },
      verify: async (_page, ctx) => (real.kind === 'write' ? placed(ctx.idempotencyKey) : { step: real.id }),
    };
    if (real.kind === 'write') {
      step.probe = async (_page, ctx) => {
        const evidence = placed(ctx.idempotencyKey);
        return evidence ? { status: 'done', evidence } : { status: 'absent' };
      };
    }
    return step;
  });
  const playbook = {
    ...checkoutPlaybook,
    description: `${checkoutPlaybook.description} (scripted steps: the load simulation)`,
    applications: { shop },
    steps,
  } as unknown as Playbook;

  return {
    browser,
    playbooks: createPlaybookRegistry([{ playbook, source: 'tools/bench/scale/world.ts' }]),
    orders,
    sessionsOpened: () => opened,
    sessionsLive: () => [...sessions.values()].filter((s) => !s.ended).length,
  };
}
