/**
 * Sign-ins that expire mid-job. The shop ends every sign-in (its admin `sessions/expire`)
 * while two jobs wait between steps: the job on a password account reauthenticates by
 * itself; the job on the outbox (SMS) account waits in WAITING_MFA for a person, who reads
 * the code from the shop's outbox and sends it through the API; both finish with one order.
 * A sign-in that expires after the last step makes Finish ask for a code the same way.
 */
import { describe, type ExpectStatic, expect, it } from 'vitest';
import type { FaultPointEvent } from '../../../local/lambda/events.ts';
import { type EngineStack, useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_STEPS, PLACE_ORDER } from '../../support/fixtures.ts';
import {
  approve,
  historyOf,
  runToSuccess,
  sendCode,
  submitCheckout,
  waitForJob,
  waitingAt,
} from '../../support/jobs.ts';
import {
  completedSteps,
  executionsPerStep,
  keyOf,
  ofType,
  reExecutedAfterCompletion,
} from '../../support/records.ts';

const engine = useEngineStack();

const PASSWORD_JOB = 'auth-password';
const SMS_JOB = 'auth-sms';
const SMS_USER = 'alan@example.com';
const OPEN_CART = CHECKOUT_STEPS.indexOf('open-cart');

let expired: Promise<number> | undefined;
/** Once both jobs wait for their approval before open-cart, the shop ends every sign-in. */
function expireWhenBothWait(e: EngineStack): Promise<number> {
  expired ??= (async () => {
    for (const jobId of [PASSWORD_JOB, SMS_JOB]) {
      await waitForJob(e, jobId, waitingAt('approval', 'open-cart'), {
        timeoutMs: 240_000,
        what: `${jobId} waiting before open-cart`,
      });
    }
    const at = Date.now();
    const { expired: count } = await e.shop.expireSessions();
    expect(count).toBeGreaterThanOrEqual(2);
    return at;
  })();
  return expired;
}

/** The RunStep outcomes the state machine routed on, in order. */
function routedOutcomes(e: EngineStack, jobId: string): { outcome?: string; step?: string }[] {
  return historyOf(e, jobId)
    .filter((h) => h.type === 'ChoiceStateEntered' && h.stateEnteredEventDetails?.name === 'Route')
    .map((h) => (JSON.parse(h.stateEnteredEventDetails?.input ?? '{}') as { result?: object }).result ?? {});
}

/** A new one-time code for `username`, once the shop has sent more than `already`. */
async function nextCode(e: EngineStack, username: string, already: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const sent = (await e.shop.outbox()).filter((m) => m.username === username);
    const code = sent[already]?.code;
    if (code) return code;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the shop sent no code #${already + 1} to ${username}`);
}

/**
 * The expired sign-in cost no retry and re-ran nothing already done, and RunStep handled it
 * itself at open-cart (signing in, or asking a person for the code: `mfa`), with no detour
 * through the Reauthenticate state.
 */
function expectCleanReauth(
  check: ExpectStatic,
  e: EngineStack,
  jobId: string,
  view: Awaited<ReturnType<typeof runToSuccess>>,
  mfa: boolean,
): void {
  const { job, entries } = view;
  expect(job.status).toBe('SUCCEEDED');
  expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
  expect(reExecutedAfterCompletion(e, jobId, entries)).toEqual([]);
  const runs = executionsPerStep(e, jobId);
  for (let i = 0; i < OPEN_CART; i++) expect(runs.get(i), CHECKOUT_STEPS[i]).toBe(1);
  const routed = routedOutcomes(e, jobId);
  expect(routed.filter((r) => r.outcome === 'auth_expired')).toEqual([]);
  const asked = routed.filter((r) => r.outcome === 'mfa_required').map((r) => r.step);
  expect(asked).toEqual(mfa ? ['sign-in', 'open-cart'] : []);
  const entered = historyOf(e, jobId).map((h) => h.stateEnteredEventDetails?.name);
  expect(entered).not.toContain('Reauthenticate');
  // (Soft, so the checks after it still run when it fails.)
  check.soft(ofType(entries, 'step-failed').map((f) => `${f.step}: ${String(f.detail?.reason)}`)).toEqual([]);
  check.soft(job.retriesUsed).toBe(0);
}

describe.concurrent('Engine: expired sign-in mid-job', () => {
  it('reauthenticates by itself and finishes (password account)', { timeout: 300_000 }, async ({
    expect,
  }) => {
    const e = engine();
    const jobId = PASSWORD_JOB;
    await submitCheckout(e, { jobId, account: 'acct_demo_shop', approvals: ['open-cart'] });
    const expiredAt = await expireWhenBothWait(e);
    await approve(e, jobId, 'open-cart');
    const view = await runToSuccess(e, jobId, { timeoutMs: 240_000 });

    expectCleanReauth(expect, e, jobId, view, false);
    // The job signed in again at open-cart, after the expiry, with no person involved.
    const reauth = ofType(view.entries, 'reauth').filter((r) => Date.parse(r.at) >= expiredAt);
    expect(reauth.map((r) => r.step)).toEqual(['open-cart']);
    expect(ofType(view.entries, 'mfa-requested')).toEqual([]);

    const key = await keyOf(e, jobId, 'place-order');
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
  });

  it('waits in WAITING_MFA for the outbox code, twice, and resumes once it is sent (SMS account)', {
    timeout: 300_000,
  }, async ({ expect }) => {
    const e = engine();
    const jobId = SMS_JOB;
    await submitCheckout(e, { jobId, account: 'acct_demo_shop_sms', approvals: ['open-cart'] });

    // First sign-in: the shop sends a code to the account holder; the job waits for them.
    const first = await waitForJob(e, jobId, waitingAt('mfa', 'sign-in'), {
      timeoutMs: 200_000,
      what: 'WAITING_MFA at sign-in',
    });
    expect(first.job.status).toBe('WAITING_MFA');
    const code1 = await nextCode(e, SMS_USER, 0);
    await sendCode(e, jobId, code1);

    // Mid-job, the sign-in expires: the job asks for a person again, at the step it was on.
    const expiredAt = await expireWhenBothWait(e);
    await approve(e, jobId, 'open-cart');
    const second = await waitForJob(e, jobId, waitingAt('mfa', 'open-cart'), {
      timeoutMs: 120_000,
      what: 'WAITING_MFA at open-cart',
    });
    expect(second.job.status).toBe('WAITING_MFA');
    expect(second.job.nextStep).toBe(OPEN_CART);
    const code2 = await nextCode(e, SMS_USER, 1);
    expect(code2).not.toBe(code1);
    await sendCode(e, jobId, code2);
    const view = await runToSuccess(e, jobId, { timeoutMs: 240_000 });

    expectCleanReauth(expect, e, jobId, view, true);
    const { entries } = view;
    expect(ofType(entries, 'mfa-requested').map((m) => m.step)).toEqual(['sign-in', 'open-cart']);
    expect(ofType(entries, 'mfa-completed').map((m) => m.step)).toEqual(['sign-in', 'open-cart']);
    const completedAfterExpiry = ofType(entries, 'mfa-completed').filter(
      (m) => Date.parse(m.at) >= expiredAt,
    );
    expect(completedAfterExpiry).toHaveLength(1);
    // The shop sent exactly the two codes, and neither is anywhere in the ledger.
    expect((await e.shop.outbox()).filter((m) => m.username === SMS_USER)).toHaveLength(2);
    const ledgerText = JSON.stringify(entries);
    expect(ledgerText).not.toContain(code1);
    expect(ledgerText).not.toContain(code2);

    const key = await keyOf(e, jobId, 'place-order');
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
    expect(writes.items.find((o) => o.key === key)?.username).toBe(SMS_USER);
  });
});

// After the block above (its sign-in expiry would end this job's sign-in at another moment).
describe('Engine: sign-in expired before Finish verifies', () => {
  it('waits in WAITING_MFA at Finish for one new code, then verifies and succeeds (SMS account)', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'auth-sms-finish';
    const codesBefore = (await e.shop.outbox()).filter((m) => m.username === SMS_USER).length;
    // Once the last step has acted, the shop ends every sign-in: Finish finds the site signed out.
    let expiring: Promise<unknown> | undefined;
    const onPoint = (p: FaultPointEvent): void => {
      if (p.info.jobId !== jobId || p.info.stepIndex !== PLACE_ORDER || p.point !== 'after-action') return;
      e.stack.lambdas.events.off('fault-point', onPoint);
      expiring = e.shop.expireSessions();
    };
    e.stack.lambdas.events.on('fault-point', onPoint);
    try {
      await submitCheckout(e, { jobId, account: 'acct_demo_shop_sms' });
      // The account's profile may still be signed in from the jobs above; if not, a code first.
      const atSignIn = waitingAt('mfa', 'sign-in');
      const atApproval = waitingAt('approval', 'place-order');
      const first = await waitForJob(e, jobId, (v) => atSignIn(v) || atApproval(v), {
        timeoutMs: 200_000,
        what: 'MFA at sign-in or approval at place-order',
      });
      let codes = codesBefore;
      if (first.job.wait?.kind === 'mfa') {
        await sendCode(e, jobId, await nextCode(e, SMS_USER, codes++));
        await waitForJob(e, jobId, atApproval, { timeoutMs: 200_000, what: 'approval at place-order' });
      }
      await approve(e, jobId, 'place-order');

      const atFinish = await waitForJob(e, jobId, waitingAt('mfa', 'place-order'), {
        timeoutMs: 120_000,
        what: 'MFA asked by Finish',
      });
      expect(await expiring).toMatchObject({ expired: expect.any(Number) });
      expect(atFinish.job.status).toBe('WAITING_MFA');
      expect(atFinish.job.nextStep).toBe(CHECKOUT_STEPS.length);
      await sendCode(e, jobId, await nextCode(e, SMS_USER, codes));
      const view = await runToSuccess(e, jobId, { timeoutMs: 120_000 });

      expect(view.job.status).toBe('SUCCEEDED');
      const signInCodes = codes - codesBefore;
      const asked = [...(signInCodes ? ['sign-in'] : []), 'place-order'];
      expect(ofType(view.entries, 'mfa-requested').map((m) => m.step)).toEqual(asked);
      expect(ofType(view.entries, 'mfa-completed').map((m) => m.step)).toEqual(asked);
      // Straight from Finish to the wait: one sign-in attempt, one code, no Reauthenticate detour.
      expect((await e.shop.outbox()).filter((m) => m.username === SMS_USER)).toHaveLength(codes + 1);
      const entered = historyOf(e, jobId).map((h) => h.stateEnteredEventDetails?.name);
      expect(entered).not.toContain('Reauthenticate');
      expect(entered.filter((n) => n === 'Finish')).toHaveLength(2);
      expect(completedSteps(view.entries)).toEqual([...CHECKOUT_STEPS]);
      const writes = await e.shop.writes();
      const key = await keyOf(e, jobId, 'place-order');
      expect(writes.countsByKey[key]).toBe(1);
      expect(writes.attemptsByKey[key]).toBe(1);
    } finally {
      e.stack.lambdas.events.off('fault-point', onPoint);
    }
  });
});
