/**
 * Checkout step 14: place the order. The only write of the checkout: it sends the step's
 * idempotency key as the form's hidden `idempotencyKey`, is verified by the confirmation page
 * (which shows the key back), and probed on the orders page by that key.
 */
import {
  appUrl,
  clickAndWait,
  countedProbe,
  dataAttr,
  goto,
  hasVisibleError,
  isAt,
  type ProbeResult,
  READY_TIMEOUT_MS,
  rowsWithKey,
  type Step,
  tid,
  visibleErrorText,
  visibleWithin,
} from 'belay/sdk';
import { shop as shopApplication } from '../demo-sites.ts';
import type { CheckoutInputs } from './inputs.ts';
import { APP, startsAt } from './starts-at.ts';

export const placeOrder: Step<CheckoutInputs> = {
  id: 'place-order',
  title: 'Place the order',
  kind: 'write',
  app: APP,
  needsApproval: true,
  ...startsAt('/checkout/review', 'place-order-form'),
  async run(page, ctx) {
    await placeOrder.prepare?.(page, ctx);
    await placeOrder.commit?.(page, ctx);
  },
  // In two parts, so that a drift check goes up to the click that places the order, never past it.
  async prepare(page, ctx) {
    const key = page.locator(`${tid('place-order-form')} input[name="idempotencyKey"]`);
    await key.evaluate((el, value) => {
      (el as HTMLInputElement).value = value;
    }, ctx.idempotencyKey);
  },
  async commit(page, ctx) {
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('place-order'));
  },
  async commitMissing(page) {
    return (await visibleWithin(page, tid('place-order'), READY_TIMEOUT_MS))
      ? null
      : 'the Place order button is not on the page';
  },
  async verify(page, ctx) {
    if (!isAt(page, ctx, APP, /^\/orders\/[^/]+$/) || (await hasVisibleError(page))) return null;
    const confirmation = tid('order-confirmation');
    if ((await dataAttr(page, confirmation, 'key')) !== ctx.idempotencyKey) return null;
    const orderId = await dataAttr(page, confirmation, 'order-id');
    const total = Number(await dataAttr(page, confirmation, 'total'));
    return orderId ? { orderId, totalPence: total } : null;
  },
  refusal: (page) => visibleErrorText(page),
  async probe(page, ctx): Promise<ProbeResult> {
    const key = ctx.idempotencyKey;
    try {
      await goto(page, appUrl(ctx, APP, `/orders?key=${encodeURIComponent(key)}`));
    } catch (err) {
      return {
        status: 'unknown',
        detail: `the orders page did not load: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    if (await shopApplication.isSignedOut(page))
      return { status: 'unknown', detail: 'signed out of the shop' };
    if (!isAt(page, ctx, APP, /^\/orders$/))
      return { status: 'unknown', detail: 'the shop did not show its orders page' };
    if (await visibleWithin(page, `${tid('order-row')}, ${tid('orders-empty')}`, READY_TIMEOUT_MS)) {
      // Every order placed with this key: a shop that de-duplicates nothing may hold two.
      const orders = await rowsWithKey(page, tid('order-row'), key, async (r) => {
        const orderId = await r.getAttribute('data-order-id');
        return orderId ? { orderId, totalPence: Number(await r.getAttribute('data-total')) } : null;
      });
      const found = countedProbe(orders, 'orders');
      if (found) return found;
      if (await page.locator(tid('orders-empty')).count())
        return { status: 'absent', detail: 'the shop has no order with this key' };
    }
    return {
      status: 'unknown',
      detail: 'the orders page did not show orders or "no order" (layout changed?)',
    };
  },
};
