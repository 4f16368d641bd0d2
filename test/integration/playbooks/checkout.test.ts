import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { StepActionError } from '../../../lambdas/lib/playbooks/errors.ts';
import type { CheckoutInputs } from '../../../playbooks/checkout/index.ts';
import { checkoutPlaybook as playbook } from '../../../playbooks/checkout/index.ts';
import { CHECKOUT_STEPS } from '../../support/fixtures.ts';
import type { SiteClient } from '../sites/http-client.ts';
import {
  contextFor,
  drive,
  driveUntil,
  keyOf,
  launchChromium,
  newJob,
  preconditionsInParallel,
  ready,
  signedInContext,
  stepOf,
} from './harness.ts';

const INPUTS: CheckoutInputs = {
  search: 'mug',
  items: [
    { sku: 'MUG-ENAMEL-BLU', quantity: 2 },
    { sku: 'MUG-STONE-GRY', quantity: 3 },
  ],
  shippingAddress: {
    name: 'Grace Hopper',
    line1: '1 Navy Way',
    city: 'Portsmouth',
    postcode: 'PO1 3LJ',
    country: 'GB',
  },
  shippingMethod: 'express',
  promoCode: 'SAVE10',
  payment: { savedCardLast4: '4242' },
};

let browser: Browser;
let sites: StartedSites;
let shop: SiteAdmin;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  sites = await startSites();
  shop = siteAdmin(sites.shop.baseUrl, sites.adminToken);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await sites?.stop();
});

beforeEach(async () => {
  await shop.reset();
  context = await browser.newContext();
  page = await context.newPage();
});

afterEach(async () => {
  await context.close();
});

/** Ada's basket brought to `stage` over HTTP; the browser gets her session (a signed-in profile). */
async function prepared(stage: 'payment' | 'review', inputs: CheckoutInputs = INPUTS): Promise<SiteClient> {
  const client = await signedInContext(context, sites.shop.baseUrl, 'shop', 'ada@example.com');
  for (const item of inputs.items)
    await client.post('/cart/add', { sku: item.sku, quantity: String(item.quantity) });
  await client.post('/checkout/address', { ...inputs.shippingAddress });
  await client.post('/checkout/shipping', { method: inputs.shippingMethod });
  if (stage === 'review') {
    if (inputs.promoCode) await client.post('/checkout/promo', { promoCode: inputs.promoCode });
    await client.post('/checkout/payment', { method: `pm_visa_${inputs.payment.savedCardLast4}` });
  }
  return client;
}

describe('Playbook: checkout@1', () => {
  it('places the order in fourteen verified steps, the TOTP account signing in by itself', async () => {
    const job = newJob(sites, INPUTS, { shop: 'grace@example.com' });
    const evidence = await driveUntil(playbook, 'no-such-step', page, job);
    expect(evidence).toHaveLength(14);
    const [, signedIn, searched, , , quantities, , , , method, promo, payment, reviewed, placed] = evidence;
    expect(signedIn).toEqual({ signedIn: true, application: 'shop' });
    expect(searched).toEqual({ query: 'mug', results: 3 });
    expect(quantities).toEqual({ lines: 2, units: 5 });
    expect(method).toEqual({ method: 'express', shippingPence: 695 });
    expect(promo).toEqual({ promoCode: 'SAVE10', discountPence: 675 });
    expect(payment).toEqual({ cardBrand: 'Visa', cardLast4: '4242' });
    expect(reviewed).toMatchObject({
      subtotalPence: 6750,
      discountPence: 675,
      shippingPence: 695,
      totalPence: 6770,
    });
    expect(placed).toEqual({ orderId: expect.stringMatching(/^HS-\d+$/), totalPence: 6770 });
    const writes = await shop.writes();
    expect(writes.countsByKey).toEqual({ [keyOf(job, 'place-order')]: 1 });
    const grace = demoCredentials('shop', 'grace@example.com');
    const logged = JSON.stringify([job.log, evidence]);
    expect(logged).not.toContain(grace.password);
    expect(logged).not.toContain('4242424242424242');
  });

  it('declares place-order as the one write, approved first, with a probe', () => {
    expect(playbook.steps.map((s) => s.id)).toEqual([...CHECKOUT_STEPS]);
    const writes = playbook.steps.filter((s) => s.kind === 'write');
    expect(writes.map((s) => [s.id, s.needsApproval, typeof s.probe])).toEqual([
      ['place-order', true, 'function'],
    ]);
    expect(playbook.steps.filter((s) => s.needsApproval).map((s) => s.id)).toEqual(['place-order']);
  });

  it('with the response dropped: verify is null, the probe says done, and consulting it creates no second order', async () => {
    await prepared('review');
    const job = newJob(sites, INPUTS, { shop: 'ada@example.com' });
    const step = stepOf(playbook, 'place-order');
    const ctx = contextFor(job, step);
    await shop.setFaults({ dropNextWriteResponse: true });
    expect(await ready(step, page, ctx)).toEqual({ ok: true });
    await step.run(page, ctx);
    expect(await step.verify(page, ctx)).toBeNull();
    expect((await shop.writes()).countsByKey).toEqual({ [ctx.idempotencyKey]: 1 });

    // The next attempt asks the shop first, as the engine does for an intent without a completion.
    const probe = await step.probe?.(page, ctx);
    expect(probe).toEqual({
      status: 'done',
      evidence: { orderId: expect.stringMatching(/^HS-/), totalPence: 6770 },
    });
    const writes = await shop.writes();
    expect(writes.countsByKey).toEqual({ [ctx.idempotencyKey]: 1 });
    expect(writes.attemptsByKey[ctx.idempotencyKey]).toBe(1);
    expect((await shop.requests()).postsByPath['/orders']).toBe(1);
  });

  it('probes absent when no order was placed, and done after placing it with the same key', async () => {
    await prepared('review');
    const job = newJob(sites, INPUTS, { shop: 'ada@example.com' });
    const step = stepOf(playbook, 'place-order');
    const ctx = contextFor(job, step);
    expect(await step.probe?.(page, ctx)).toMatchObject({ status: 'absent' });
    const { pre, evidence } = await drive(playbook, step, page, job);
    expect(pre).toEqual({ ok: true });
    expect(evidence).toEqual({ orderId: expect.stringMatching(/^HS-/), totalPence: 6770 });
    expect(await step.probe?.(page, ctx)).toEqual({ status: 'done', evidence });
  });

  it('reports a changed layout at every step without clicking anything', async () => {
    await prepared('review');
    await shop.setFaults({ changedLayout: true });
    await shop.clearRequests();
    const job = newJob(sites, INPUTS, { shop: 'ada@example.com' });
    const steps = playbook.steps.filter((s) => s.id !== 'open-shop');
    const results = await preconditionsInParallel(browser, context, job, steps);
    expect(results).toHaveLength(13);
    for (const [id, pre] of results)
      expect([id, pre]).toMatchObject([id, { ok: false, reason: 'layout_changed' }]);
    const place = stepOf(playbook, 'place-order');
    expect(await place.probe?.(page, contextFor(job, place))).toMatchObject({ status: 'unknown' });
    expect((await shop.requests()).postsByPath).toEqual({});
  });

  it('reports signed out at every step once sign-ins expire, and resumes after signing in again', async () => {
    await prepared('review');
    await shop.expireSessions();
    const job = newJob(sites, INPUTS, { shop: 'ada@example.com' });
    const steps = playbook.steps.filter((s) => s.id !== 'open-shop');
    const results = await preconditionsInParallel(browser, context, job, steps);
    expect(results).toHaveLength(13);
    for (const [id, pre] of results)
      expect([id, pre]).toMatchObject([id, { ok: false, reason: 'signed_out' }]);
    const place = stepOf(playbook, 'place-order');
    const ctx = contextFor(job, place);
    expect(await place.probe?.(page, ctx)).toMatchObject({ status: 'unknown' });
    // The engine re-authenticates on the page it has, then the step starts where it left off.
    await place.restore(page, ctx);
    expect(await playbook.applications.shop?.signIn(page, ctx as never)).toEqual({ status: 'signed_in' });
    expect(await place.precondition(page, ctx)).toEqual({ ok: true });
    expect((await shop.writes()).count).toBe(0);
  });

  it.each([
    ['payment-details', { payment: { savedCardLast4: '0002' } }, 'Your card was declined.'],
    ['apply-promo', { promoCode: 'NOPE' }, '“NOPE” is not a valid promo code'],
    [
      'shipping-address',
      { shippingAddress: { ...INPUTS.shippingAddress, postcode: 'XYZ' } },
      'Enter a real postcode',
    ],
  ] as const)('%s with a bad input shows the site error and does not verify', async (id, change, message) => {
    await prepared('payment');
    const job = newJob(sites, { ...INPUTS, ...change } as CheckoutInputs, { shop: 'ada@example.com' });
    const { pre, evidence } = await drive(playbook, stepOf(playbook, id), page, job);
    expect(pre).toEqual({ ok: true });
    expect(evidence).toBeNull();
    expect(await page.locator('[role="alert"]').textContent()).toContain(message);
  });

  it('refuses a card that is not saved on the account, and inputs with card details or missing fields', async () => {
    await prepared('payment');
    const job = newJob(
      sites,
      { ...INPUTS, payment: { savedCardLast4: '1111' } },
      { shop: 'ada@example.com' },
    );
    await expect(drive(playbook, stepOf(playbook, 'payment-details'), page, job)).rejects.toBeInstanceOf(
      StepActionError,
    );
    const withCard = playbook.inputSchema.safeParse({
      ...INPUTS,
      payment: { cardNumber: '4242424242424242' },
    });
    expect(withCard.success).toBe(false);
    const missing = playbook.inputSchema.safeParse({
      ...INPUTS,
      shippingAddress: { name: 'A', line1: '', city: 'X', postcode: 'Y', country: 'GB' },
    });
    expect(missing.error?.issues[0]?.path).toEqual(['shippingAddress', 'line1']);
    expect(playbook.inputSchema.safeParse(INPUTS).success).toBe(true);
  });
});
