/**
 * Identities on a session of the local Anchor service: `POST /v1/sessions` with
 * `identities: [{ id }]` refuses an unknown identity (404, as Anchor does) before any browser
 * starts, and signs each known one in before the session is handed back.
 */
import { chromium } from 'playwright-core';
import type { IdentityRegistry } from './identities.ts';
import { signInIdentity } from './identity-sign-in.ts';

/** What the session manager asks of identities. */
export interface SessionIdentities {
  /** Throws a 404 `ApiError` naming no credentials when an id is unknown. */
  check(ids: readonly string[]): Promise<void>;
  /** Signs each identity in, in the browser at `wsEndpoint`; records each identity's status. */
  signIn(wsEndpoint: string, ids: readonly string[]): Promise<void>;
}

/** Session identities backed by the service's registry. */
export function createSessionIdentities(
  registry: IdentityRegistry,
  log: (line: string) => void,
): SessionIdentities {
  return {
    check: (ids) => registry.assertIdentities(ids),
    async signIn(wsEndpoint, ids) {
      if (ids.length === 0) return;
      const browser = await chromium.connectOverCDP(wsEndpoint, { timeout: 15_000 });
      try {
        const context = browser.contexts()[0] ?? (await browser.newContext());
        const page = context.pages()[0] ?? (await context.newPage());
        for (const id of ids) {
          const { identity, application } = await registry.forSignIn(id);
          const outcome = await signInIdentity(page, application, identity);
          await registry.updateIdentity(id, { status: outcome });
          log(`identity ${id}: ${outcome} at ${application.name}`);
        }
      } finally {
        // Over CDP, close() only disconnects: the session's browser lives on, signed in.
        await browser.close().catch(() => undefined);
      }
    },
  };
}
