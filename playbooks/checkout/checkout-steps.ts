import {
  appUrl,
  clickAndWait,
  dataAttr,
  EVIDENCE_TIMEOUT_MS,
  goto,
  hasVisibleError,
  isAt,
  type Step,
  StepActionError,
  type StepContext,
  sameText,
  tid,
  visibleWithin,
} from 'belay/sdk';
import type { CheckoutInputs } from './inputs.ts';
import { APP, startsAt } from './starts-at.ts';

type S = Step<CheckoutInputs>;
type Ctx = StepContext<CheckoutInputs>;

/** On `path` with no error shown. */
async function cleanlyAt(page: Parameters<S['verify']>[0], ctx: Ctx, path: RegExp): Promise<boolean> {
  return isAt(page, ctx, APP, path) && !(await hasVisibleError(page));
}

export const startCheckout: S = {
  id: 'start-checkout',
  title: 'Start checkout',
  kind: 'read',
  app: APP,
  ...startsAt('/cart', 'checkout-button'),
  run: async (page) => clickAndWait(page, tid('checkout-button')),
  verify: async (page, ctx) =>
    (await cleanlyAt(page, ctx, /^\/checkout\/address$/)) &&
    (await visibleWithin(page, tid('address-form'), EVIDENCE_TIMEOUT_MS))
      ? { page: 'checkout-address' }
      : null,
};

export const shippingAddress: S = {
  id: 'shipping-address',
  title: 'Enter the delivery address',
  kind: 'read',
  app: APP,
  ...startsAt('/checkout/address', 'address-form'),
  async run(page, ctx) {
    const a = ctx.inputs.shippingAddress;
    await page.locator(tid('name')).fill(a.name);
    await page.locator(tid('line1')).fill(a.line1);
    await page.locator(tid('line2')).fill(a.line2 ?? '');
    await page.locator(tid('city')).fill(a.city);
    await page.locator(tid('postcode')).fill(a.postcode);
    await page.locator(tid('country')).selectOption(a.country);
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('address-submit'));
  },
  async verify(page, ctx) {
    if (!(await cleanlyAt(page, ctx, /^\/checkout\/shipping$/))) return null;
    const a = ctx.inputs.shippingAddress;
    const postcode = await dataAttr(page, tid('ship-to'), 'postcode');
    const country = await dataAttr(page, tid('ship-to'), 'country');
    return sameText(postcode, a.postcode) && country === a.country
      ? { city: a.city, country: a.country }
      : null;
  },
};

export const shippingMethod: S = {
  id: 'shipping-method',
  title: 'Choose the delivery method',
  kind: 'read',
  app: APP,
  ...startsAt('/checkout/shipping', 'shipping-form'),
  async run(page, ctx) {
    const option = page.locator(tid(`shipping-${ctx.inputs.shippingMethod}`));
    if (!(await option.count()))
      throw new StepActionError('shipping-method', `no delivery option ${ctx.inputs.shippingMethod}`);
    await option.check();
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('shipping-submit'));
  },
  async verify(page, ctx) {
    if (!(await cleanlyAt(page, ctx, /^\/checkout\/payment$/))) return null;
    const method = await dataAttr(page, tid('shipping-line'), 'method');
    const pence = Number(await dataAttr(page, tid('shipping-line'), 'pence'));
    return method === ctx.inputs.shippingMethod ? { method, shippingPence: pence } : null;
  },
};

export const applyPromo: S = {
  id: 'apply-promo',
  title: 'Apply the promo code',
  kind: 'read',
  app: APP,
  ...startsAt('/checkout/payment', 'payment-form'),
  async run(page, ctx) {
    const code = ctx.inputs.promoCode?.toUpperCase();
    const applied = (await page.locator(tid('promo-applied')).count())
      ? await page.locator(tid('promo-applied')).getAttribute('data-code')
      : undefined;
    if (applied === code || (!code && !applied)) return;
    if (applied) await clickAndWait(page, tid('promo-remove'));
    if (!code) return;
    await page.locator(tid('promo-code')).fill(code);
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('promo-apply'));
  },
  async verify(page, ctx) {
    if (!(await cleanlyAt(page, ctx, /^\/checkout\/payment$/))) return null;
    const code = ctx.inputs.promoCode?.toUpperCase();
    if (!code)
      return (await page.locator(tid('promo-form')).count()) ? { promoCode: null, discountPence: 0 } : null;
    const applied = await dataAttr(page, tid('promo-applied'), 'code');
    const discount = Number(await dataAttr(page, tid('promo-applied'), 'discount'));
    return applied === code ? { promoCode: code, discountPence: discount } : null;
  },
};

export const paymentDetails: S = {
  id: 'payment-details',
  title: 'Choose the payment card',
  kind: 'read',
  app: APP,
  ...startsAt('/checkout/payment', 'payment-form'),
  async run(page, ctx) {
    const last4 = ctx.inputs.payment.savedCardLast4;
    const card = page.locator(`${tid('saved-card')}[data-last4="${last4}"]`);
    if (!(await card.count())) throw new StepActionError('payment-details', `no saved card ending ${last4}`);
    await card.check();
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('payment-submit'));
  },
  async verify(page, ctx) {
    if (!(await cleanlyAt(page, ctx, /^\/checkout\/review$/))) return null;
    const last4 = await dataAttr(page, tid('payment-summary'), 'last4');
    const brand = await dataAttr(page, tid('payment-summary'), 'brand');
    return last4 === ctx.inputs.payment.savedCardLast4
      ? { cardBrand: brand ?? null, cardLast4: last4 }
      : null;
  },
};

/** Reads the review page back and checks it says what the inputs asked for: the approver's evidence. */
export const review: S = {
  id: 'review',
  title: 'Review the order',
  kind: 'read',
  app: APP,
  ...startsAt('/checkout/review', 'place-order-form'),
  // Looking is the action: load the review page fresh from the shop's state.
  run: async (page, ctx) => goto(page, appUrl(ctx, APP, '/checkout/review')),
  async verify(page, ctx) {
    if (!(await cleanlyAt(page, ctx, /^\/checkout\/review$/))) return null;
    const totals = tid('totals');
    const num = async (name: string): Promise<number> => Number(await dataAttr(page, totals, name));
    for (const item of ctx.inputs.items) {
      const qty = Number(await dataAttr(page, `${tid('line')}[data-sku="${item.sku}"]`, 'quantity', 1_000));
      if (qty !== item.quantity) return null;
    }
    if ((await dataAttr(page, tid('payment-summary'), 'last4')) !== ctx.inputs.payment.savedCardLast4)
      return null;
    if ((await dataAttr(page, tid('review-shipping'), 'method')) !== ctx.inputs.shippingMethod) return null;
    if (
      !sameText(await dataAttr(page, tid('review-address'), 'postcode'), ctx.inputs.shippingAddress.postcode)
    )
      return null;
    const evidence = {
      lines: await num('lines'),
      units: await num('units'),
      subtotalPence: await num('subtotal'),
      discountPence: await num('discount'),
      shippingPence: await num('shipping'),
      totalPence: await num('total'),
      cardLast4: ctx.inputs.payment.savedCardLast4,
      shippingMethod: ctx.inputs.shippingMethod,
    };
    return Number.isFinite(evidence.totalPence) && evidence.totalPence > 0 ? evidence : null;
  },
};
