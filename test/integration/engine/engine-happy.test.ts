/**
 * The happy path of both playbooks, end to end: the real ASL in the local Step Functions
 * runner, the real handlers in worker processes, DynamoDB Local, real Chromium through the
 * Anchor-compatible service, and the demo sites, whose own records are the judge.
 */
import { describe, expect, it } from 'vitest';
import { type EngineStack, useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_INPUTS, CHECKOUT_STEPS, SYNC_INPUTS } from '../../support/fixtures.ts';
import {
  historyOf,
  type JobView,
  runToSuccess,
  submitCheckout,
  submitSync,
  waitForExecutionEnd,
} from '../../support/jobs.ts';
import { completedSteps, executionsPerStep, keyOf, ofType, siteData } from '../../support/records.ts';

const engine = useEngineStack();

interface ShopRecords {
  orders: {
    key: string;
    placedAt: string;
    lines: { sku: string; quantity: number }[];
    promoCode?: string;
    address: { postcode: string };
  }[];
}
interface CrmRecords {
  customers: Record<string, { email: string; phone: string; address: Record<string, unknown> }>;
}
interface BillingRecords {
  accounts: Record<string, { email: string; address: Record<string, unknown> }>;
}

const SYNC_STEPS = [
  'crm-sign-in',
  'billing-sign-in',
  'update-crm-customer',
  'update-billing-address',
  'verify-crm-record',
  'verify-billing-account',
];

const CHECKOUT_JOB = 'happy-checkout';
let checkout: Promise<JobView> | undefined;
/** The checkout job, run once for the tests that look at it. */
function runCheckout(e: EngineStack): Promise<JobView> {
  checkout ??= (async () => {
    await submitCheckout(e, { jobId: CHECKOUT_JOB, account: 'acct_demo_shop' });
    return runToSuccess(e, CHECKOUT_JOB, { timeoutMs: 240_000 });
  })();
  return checkout;
}

describe.concurrent('Engine: happy path', () => {
  it('runs checkout@1 to SUCCEEDED: 14 verified steps in order, one approved intent, one order', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = CHECKOUT_JOB;
    const { job, entries } = await runCheckout(e);

    expect(job.status).toBe('SUCCEEDED');
    expect(job.nextStep).toBe(CHECKOUT_STEPS.length);
    const execution = await waitForExecutionEnd(e, jobId);
    expect(execution.status).toBe('SUCCEEDED');

    // Ledger: every step completed once, in order, each with evidence.
    const completions = ofType(entries, 'step-completed');
    expect(completedSteps(entries)).toEqual([...CHECKOUT_STEPS]);
    expect(completions.map((c) => c.stepIndex)).toEqual(CHECKOUT_STEPS.map((_, i) => i));
    for (const c of completions) expect(c.evidence ?? c.evidenceRef).toBeTruthy();

    // Exactly one write-ahead intent: place-order's, with its idempotency key, after the approval.
    const intents = ofType(entries, 'step-started');
    expect(intents.map((i) => i.step)).toEqual(['place-order']);
    const key = await keyOf(e, jobId, 'place-order');
    expect(intents[0]?.idempotencyKey).toBe(key);
    const position = (pred: (t: (typeof entries)[number]) => boolean): number => entries.findIndex(pred);
    const requested = position((x) => x.type === 'approval-requested' && x.step === 'place-order');
    const approved = position((x) => x.type === 'approval-recorded' && x.step === 'place-order');
    const intent = position((x) => x.type === 'step-started');
    expect(requested).toBeGreaterThan(position((x) => x.type === 'step-completed' && x.step === 'review'));
    expect(approved).toBeGreaterThan(requested);
    expect(intent).toBeGreaterThan(approved);
    expect(entries[approved]?.detail?.decision).toBe('approve');
    expect(ofType(entries, 'reconciled')).toEqual([]);

    // Each step's action ran exactly once.
    const runs = executionsPerStep(e, jobId);
    expect(CHECKOUT_STEPS.map((_, i) => runs.get(i) ?? 0)).toEqual(CHECKOUT_STEPS.map(() => 1));

    // The shop's own record: one order for the key, placed once, after the approval, with the inputs.
    const writes = await e.shop.writes();
    expect(writes.countsByKey[key]).toBe(1);
    expect(writes.attemptsByKey[key]).toBe(1);
    const order = writes.items.find((o) => o.key === key);
    const placed = completions.at(-1);
    expect(order?.orderId).toBeDefined();
    expect(placed?.evidence?.orderId).toBe(order?.orderId);
    expect(order?.username).toBe('ada@example.com');
    expect(order?.units).toBe(3);
    expect(placed?.evidence?.totalPence).toBe(order?.totalPence);
    const stored = siteData<ShopRecords>(e, 'shop').orders.find((o) => o.key === key);
    expect(stored?.lines.map((l) => [l.sku, l.quantity])).toEqual(
      CHECKOUT_INPUTS.items.map((i) => [i.sku, i.quantity]),
    );
    expect(stored?.promoCode).toBe(CHECKOUT_INPUTS.promoCode);
    expect(stored?.address.postcode).toBe(CHECKOUT_INPUTS.shippingAddress.postcode);
    expect(Date.parse(stored?.placedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(entries[approved]?.at ?? ''),
    );

    // Three state transitions per two steps: RunStep, RunNextStep, Route; detours counted apart.
    const history = historyOf(e, jobId);
    const entered = history.filter((h) => h.type.endsWith('StateEntered'));
    const count = (name: string): number =>
      entered.filter((h) => h.stateEnteredEventDetails?.name === name).length;
    const detours = count('Reauthenticate') + count('OpenSession') + count('Reconcile');
    // RunNextStep hands on (runs no step after) a RunStep whose step did not simply complete.
    const relays = entered.filter(
      (h) =>
        h.stateEnteredEventDetails?.name === 'RunNextStep' &&
        JSON.parse(h.stateEnteredEventDetails.input ?? '{}').result?.outcome !== 'completed',
    ).length;
    expect(count('RunStep') + count('RunNextStep') - relays).toBe(CHECKOUT_STEPS.length + detours);
    expect(count('Route')).toBe(count('RunNextStep'));
    expect(count('AwaitApproval')).toBe(1);
    expect(count('RecordFailure')).toBe(0);
    expect(entered.length).toBeLessThanOrEqual(2 * CHECKOUT_STEPS.length + 16);

    // Cost accumulated on the job item from every step.
    expect(job.cost.lambdaInvocations).toBeGreaterThanOrEqual(CHECKOUT_STEPS.length);
    expect(job.cost.stateTransitions).toBeGreaterThanOrEqual(2 * CHECKOUT_STEPS.length);
    expect(job.cost.dynamoWrites).toBeGreaterThanOrEqual(2 * CHECKOUT_STEPS.length);
    expect(job.cost.browserSeconds).toBeGreaterThan(0);

    // The session was ended by Finish.
    const sessionId = job.sessions.shop?.sessionId ?? '';
    expect(e.stack.anchor.session(sessionId)?.status).not.toBe('running');
  });

  it("keeps the job's cost as the sum of its ledger entries' costs (the approval counted)", {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const { job, entries } = await runCheckout(e);
    const round = (n: number): number => Math.round(n * 1000) / 1000;
    const summed: Record<string, number> = {};
    for (const entry of entries) {
      for (const [counter, value] of Object.entries(entry.cost)) {
        summed[counter] = round((summed[counter] ?? 0) + value);
      }
    }
    expect(summed.humanInterventions).toBe(1);
    const onJob = Object.fromEntries(Object.entries(job.cost).map(([k, v]) => [k, round(v)]));
    expect(onJob).toEqual(summed);
    // Every Lambda invocation the execution made is on the ledger exactly once, whether or not
    // it completed a step (Start, the step that asks for the approval, arming the wait, Finish).
    const scheduled = historyOf(e, job.jobId).filter(
      (h) => h.type === 'TaskScheduled' || h.type === 'LambdaFunctionScheduled',
    ).length;
    expect(scheduled).toBeGreaterThanOrEqual(CHECKOUT_STEPS.length + 3);
    expect(job.cost.lambdaInvocations).toBe(scheduled);
    // And every state the execution entered, as AWS bills them.
    const entered = historyOf(e, job.jobId).filter((h) => h.type.endsWith('StateEntered')).length;
    expect(job.cost.stateTransitions).toBe(entered);
  });

  it('runs crm-billing-sync@1 to SUCCEEDED: both writes land once in the crm and billing records', {
    timeout: 300_000,
  }, async () => {
    const e = engine();
    const jobId = 'happy-sync';
    await submitSync(e, jobId);
    const { job, entries } = await runToSuccess(e, jobId, { approveSteps: [], timeoutMs: 240_000 });

    expect(job.status).toBe('SUCCEEDED');
    expect(completedSteps(entries)).toEqual(SYNC_STEPS);
    expect(ofType(entries, 'step-started').map((i) => i.step)).toEqual([
      'update-crm-customer',
      'update-billing-address',
    ]);
    // One session per application.
    expect(Object.keys(job.sessions).sort()).toEqual(['billing', 'crm']);

    const crmKey = await keyOf(e, jobId, 'update-crm-customer');
    const billingKey = await keyOf(e, jobId, 'update-billing-address');
    const crm = await e.crm.writes();
    const billing = await e.billing.writes();
    expect(crm.countsByKey[crmKey]).toBe(1);
    expect(crm.attemptsByKey[crmKey]).toBe(1);
    expect(billing.countsByKey[billingKey]).toBe(1);
    expect(billing.attemptsByKey[billingKey]).toBe(1);
    // The records themselves carry the new address.
    const crmChange = crm.items.find((i) => i.key === crmKey);
    const customer = siteData<CrmRecords>(e, 'crm').customers[String(crmChange?.customerId)];
    expect(customer?.email).toBe(SYNC_INPUTS.customerEmail);
    expect(customer?.address).toMatchObject(SYNC_INPUTS.address);
    expect(customer?.phone).toBe(SYNC_INPUTS.phone);
    const billingChange = billing.items.find((i) => i.key === billingKey);
    const account = siteData<BillingRecords>(e, 'billing').accounts[String(billingChange?.accountId)];
    expect(account?.email).toBe(SYNC_INPUTS.customerEmail);
    expect(account?.address).toMatchObject(SYNC_INPUTS.address);
    const runs = executionsPerStep(e, jobId);
    expect(SYNC_STEPS.map((_, i) => runs.get(i) ?? 0)).toEqual(SYNC_STEPS.map(() => 1));
  });
});
