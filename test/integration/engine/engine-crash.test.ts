/**
 * A step worker (the RunStep Lambda) SIGKILLed before, during and after the action of a read
 * step and of the write, and while the checkpoint transaction is in flight. Nothing completed
 * is done again, nothing is lost, and the shop gets exactly one order-placing request.
 *
 * Two jobs run at once on two shop accounts (the cart is per account): one takes the four
 * kills on read steps, the other all four on the write (place-order), one after the other in
 * the same state entry (each retry of RunStep meets the next armed kill).
 */
import { describe, expect, it } from 'vitest';
import type { FaultPoint } from '../../../lambdas/lib/fault.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { armKill } from '../../support/faults.ts';
import { CHECKOUT_INPUTS, CHECKOUT_STEPS, PLACE_ORDER } from '../../support/fixtures.ts';
import { historyOf, runToSuccess, submitCheckout } from '../../support/jobs.ts';
import {
  completedSteps,
  executionsPerStep,
  keyOf,
  ofType,
  reExecutedAfterCompletion,
  runStepPoints,
  siteData,
} from '../../support/records.ts';

const engine = useEngineStack();

interface StoredOrder {
  key: string;
  lines: { sku: string; quantity: number }[];
  promoCode?: string;
}

/** Kills on read steps: search (2), add-item-b (4), shipping-address (8), apply-promo (10). */
const READ_KILLS: [number, FaultPoint][] = [
  [2, 'before-action'],
  [4, 'mid-action'],
  [8, 'after-action'],
  [10, 'during-checkpoint'],
];
const WRITE_KILLS: FaultPoint[] = ['before-action', 'mid-action', 'after-action', 'during-checkpoint'];

const firedKills = (e: ReturnType<typeof engine>, jobId: string): [number, FaultPoint][] =>
  runStepPoints(e, jobId)
    .filter((p) => p.fired)
    .map((p) => [p.info.stepIndex ?? -1, p.point]);

describe.concurrent('Engine: a step worker killed at every point', () => {
  it('loses no progress when killed before, during and after read steps and mid-checkpoint', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'crash-reads';
    for (const [index, point] of READ_KILLS) armKill(e, jobId, index, point);
    await submitCheckout(e, { jobId, account: 'acct_demo_shop' });
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 280_000 });

    expect(job.status).toBe('SUCCEEDED');
    // Every kill happened, where it was armed.
    expect(firedKills(e, jobId)).toEqual(READ_KILLS);
    // Each died worker surfaced as a dying Lambda and was retried by the state machine.
    const history = historyOf(e, jobId);
    const died = history.filter((h) => h.lambdaFunctionFailedEventDetails?.error === 'Lambda.Unknown');
    expect(died).toHaveLength(READ_KILLS.length);

    // No lost progress, nothing done twice: every step completed exactly once, in order...
    expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
    // ...no action started after its step was checkpointed...
    expect(reExecutedAfterCompletion(e, jobId, entries)).toEqual([]);
    // ...and a killed step ran again only because its attempt died before its checkpoint.
    const runs = executionsPerStep(e, jobId);
    const expected = CHECKOUT_STEPS.map((_, i) => {
      const kill = READ_KILLS.find(([index]) => index === i)?.[1];
      if (!kill) return 1;
      return kill === 'during-checkpoint' ? (runs.get(i) === 1 ? 1 : 2) : 2;
    });
    expect(CHECKOUT_STEPS.map((_, i) => runs.get(i) ?? 0)).toEqual(expected);
    // Reads write no intents; the only intent is the order's.
    expect(ofType(entries, 'step-started').map((s) => s.step)).toEqual(['place-order']);

    // The shop's record: one order, placed once, with the cart the inputs asked for (the
    // re-run add-item and promo steps added nothing twice).
    const key = await keyOf(e, jobId, 'place-order');
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
    const order = siteData<{ orders: StoredOrder[] }>(e, 'shop').orders.find((o) => o.key === key);
    expect(order?.lines.map((l) => [l.sku, l.quantity])).toEqual(
      CHECKOUT_INPUTS.items.map((i) => [i.sku, i.quantity]),
    );
    expect(order?.promoCode).toBe(CHECKOUT_INPUTS.promoCode);
  });

  it('places one order when killed before, during and after placing it and mid-checkpoint', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'crash-write';
    for (const point of WRITE_KILLS) armKill(e, jobId, PLACE_ORDER, point);
    await submitCheckout(e, { jobId, account: 'acct_demo_shop_totp' });
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 280_000 });

    expect(job.status).toBe('SUCCEEDED');
    expect(firedKills(e, jobId)).toEqual(WRITE_KILLS.map((p) => [PLACE_ORDER, p]));
    expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
    expect(reExecutedAfterCompletion(e, jobId, entries)).toEqual([]);

    // Steps before the write ran once each; the write acted in three attempts: killed before
    // acting, killed mid-action (before the click), and once for real (killed after it).
    const runs = executionsPerStep(e, jobId);
    expect(CHECKOUT_STEPS.map((_, i) => runs.get(i) ?? 0)).toEqual(
      CHECKOUT_STEPS.map((_, i) => (i === PLACE_ORDER ? 3 : 1)),
    );

    // The ledger shows the probe path: an intent per acting attempt, the two attempts that
    // died before the click found absent by the probe, and the completion recorded from the
    // probe's evidence (reconciled) after the kill that came after the click, never a second placement.
    const orderEntries = entries.filter((x) => x.step === 'place-order');
    expect(ofType(orderEntries, 'step-started').map((x) => x.attempt)).toEqual([1, 2, 3]);
    const absent = ofType(orderEntries, 'reconciled');
    expect(absent.map((x) => x.detail?.probe)).toEqual(['absent', 'absent']);
    const completion = ofType(orderEntries, 'step-completed');
    expect(completion).toHaveLength(1);
    expect(completion[0]?.evidence?.reconciled).toBe(true);
    const key = await keyOf(e, jobId, 'place-order');
    for (const intent of ofType(orderEntries, 'step-started')) expect(intent.idempotencyKey).toBe(key);

    // The shop's record: one order, and one order-placing request ever sent with the key.
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
    expect(completion[0]?.evidence?.orderId).toBe(writes.items.find((o) => o.key === key)?.orderId);
  });
});
