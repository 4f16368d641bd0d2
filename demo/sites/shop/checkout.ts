/** Checkout: delivery address, delivery method, promo code and payment, then the review page. */
import { randomUUID } from 'node:crypto';
import type { DemoAccount } from '../../accounts.ts';
import { addressErrorList, addressFields, formatAddress, parseAddress } from '../http/address.ts';
import type { PageContext } from '../http/html.ts';
import {
  byLayout,
  errorBox,
  esc,
  field,
  hidden,
  money,
  noticeBox,
  renderPage,
  submitButton,
  tid,
} from '../http/html.ts';
import type { Router, SiteRequest, SiteResponse } from '../http/router.ts';
import { html, redirect } from '../http/router.ts';
import type { SiteRuntime } from '../http/runtime.ts';
import { checkPromo, computeTotals, SHIPPING_METHODS } from './catalogue.ts';
import type { Cart, ShopData } from './data.ts';
import { cartOf } from './data.ts';
import type { CardFieldErrors } from './payments.ts';
import { authorizeNewCard, authorizeSavedCard } from './payments.ts';
import { cartLines, checkoutSteps, totalsTable } from './views.ts';

type Stage = 'address' | 'shipping' | 'payment' | 'review';

/** Where checkout must go back to when an earlier stage is missing, or undefined. */
function missingStage(cart: Cart, stage: Stage): string | undefined {
  if (cart.lines.length === 0) return '/cart?notice=Your+cart+is+empty';
  if (stage === 'address') return undefined;
  if (!cart.checkout.address) return '/checkout/address';
  if (stage === 'shipping') return undefined;
  if (!cart.checkout.shippingMethod) return '/checkout/shipping';
  if (stage === 'payment') return undefined;
  if (!cart.checkout.payment) return '/checkout/payment';
  return undefined;
}

function page(pc: PageContext, stage: Stage, title: string, main: string, status = 200): SiteResponse {
  return html(
    renderPage(pc, { title, main: `${checkoutSteps(pc, stage)}${main}`, page: `checkout-${stage}` }),
    status,
  );
}

type PageFn = (
  req: SiteRequest,
  account: DemoAccount,
  errors?: string[],
  status?: number,
  extra?: Record<string, string>,
) => SiteResponse;

/** Registers `/checkout/*`. */
export function registerCheckoutRoutes(router: Router, rt: SiteRuntime<ShopData>): void {
  const guarded = (
    stage: Stage,
    fn: (req: SiteRequest, account: DemoAccount, cart: Cart) => SiteResponse,
  ): ReturnType<typeof rt.signedIn> =>
    rt.signedIn((req, account) => {
      const cart = cartOf(rt.data, account.username);
      const back = missingStage(cart, stage);
      return back ? redirect(back) : fn(req, account, cart);
    });

  const addressPage: PageFn = (req, account, errors = [], status = 200) => {
    const pc = rt.page(req);
    const cart = cartOf(rt.data, account.username);
    const { address, errors: fieldErrors } = errors.length
      ? parseAddress(req.form, true)
      : { address: cart.checkout.address ?? {}, errors: {} };
    const main = `<h1>Delivery address</h1>${errorBox(pc, errors)}
      <form method="post" action="/checkout/address" ${tid(pc, 'address-form')}>${addressFields(pc, address, fieldErrors, true)}
      ${submitButton(pc, 'address-submit', 'Continue to delivery options', 'Next')}</form>`;
    return page(pc, 'address', 'Delivery address', main, status);
  };
  router.get(
    '/checkout/address',
    guarded('address', (req, account) => addressPage(req, account)),
  );
  router.post(
    '/checkout/address',
    guarded('address', (req, account, cart) => {
      const { address, errors } = parseAddress(req.form, true);
      const list = addressErrorList(errors);
      if (list.length) return addressPage(req, account, list, 400);
      rt.store.update(() => {
        cart.checkout.address = address;
      });
      return redirect('/checkout/shipping');
    }),
  );

  const shippingPage: PageFn = (req, account, errors = [], status = 200) => {
    const pc = rt.page(req);
    const cart = cartOf(rt.data, account.username);
    const a = cart.checkout.address;
    const options = SHIPPING_METHODS.map(
      (m) =>
        `<label class="choice"><input type="radio" name="method" value="${m.id}"${cart.checkout.shippingMethod === m.id ? ' checked' : ''} ${tid(pc, `shipping-${m.id}`)}> ${esc(m.label)} <strong>${money(m.pricePence)}</strong></label>`,
    ).join('');
    const main = `<h1>Delivery options</h1>${errorBox(pc, errors)}
      <p ${tid(pc, 'ship-to')} data-city="${esc(a?.city)}" data-postcode="${esc(a?.postcode)}" data-country="${esc(a?.country)}">Delivering to:<br>${a ? formatAddress(a) : ''}</p>
      <p><a href="/checkout/address">Change address</a></p>
      <form method="post" action="/checkout/shipping" ${tid(pc, 'shipping-form')}><fieldset><legend>Choose a delivery option</legend>${options}</fieldset>
      ${submitButton(pc, 'shipping-submit', 'Continue to payment', 'Next')}</form>`;
    return page(pc, 'shipping', 'Delivery options', main, status);
  };
  router.get(
    '/checkout/shipping',
    guarded('shipping', (req, account) => shippingPage(req, account)),
  );
  router.post(
    '/checkout/shipping',
    guarded('shipping', (req, account, cart) => {
      const method = req.form.get('method') ?? '';
      if (!SHIPPING_METHODS.some((m) => m.id === method))
        return shippingPage(req, account, ['Choose a delivery option'], 400);
      rt.store.update(() => {
        cart.checkout.shippingMethod = method;
      });
      return redirect('/checkout/payment');
    }),
  );

  const paymentPage = (
    req: SiteRequest,
    account: DemoAccount,
    errors: string[] = [],
    status = 200,
    cardErrors: CardFieldErrors = {},
    promoError?: string,
  ): SiteResponse => {
    const pc = rt.page(req);
    const cart = cartOf(rt.data, account.username);
    const c = cart.checkout;
    const method = SHIPPING_METHODS.find((m) => m.id === c.shippingMethod);
    const t = computeTotals(cart.lines, c.shippingMethod, c.promoCode);
    const promo = c.promoCode
      ? `<p ${tid(pc, 'promo-applied')} data-code="${esc(c.promoCode)}" data-discount="${t.discountPence}">Promo code <strong>${esc(c.promoCode)}</strong> applied: ${money(-t.discountPence)}</p>
         <form method="post" action="/checkout/promo/remove" class="inline">${submitButton(pc, 'promo-remove', 'Remove code', 'Remove', true)}</form>`
      : `<form method="post" action="/checkout/promo" ${tid(pc, 'promo-form')}>${field(pc, { name: 'promoCode', label: 'Promo code', testid: 'promo-code', value: req.form.get('promoCode') ?? '', width: 'short', ...(promoError ? { error: promoError } : {}) })}
         ${submitButton(pc, 'promo-apply', 'Apply', 'Redeem', true)}</form>`;
    const chosen = req.form.get('method') ?? c.payment?.methodId ?? '';
    const saved = (rt.data.savedCards[account.username] ?? [])
      .map(
        (card) =>
          `<label class="choice"><input type="radio" name="method" value="${esc(card.id)}"${chosen === card.id ? ' checked' : ''} ${tid(pc, 'saved-card')} data-last4="${esc(card.last4)}"> ${esc(card.brand)} ending ${esc(card.last4)}, expires ${String(card.expMonth).padStart(2, '0')}/${card.expYear}</label>`,
      )
      .join('');
    const f = (
      name: keyof CardFieldErrors,
      label: string,
      extra: { autocomplete: string; width?: 'short'; inputmode?: string },
    ): string =>
      field(pc, {
        name,
        label,
        ...extra,
        ...(cardErrors[name] ? { error: cardErrors[name] } : {}),
        value: name === 'cardName' || name === 'expiry' ? (req.form.get(name) ?? '') : '',
      });
    const main = `<h1>Payment</h1>${errorBox(pc, errors)}${noticeBox(pc, req.query.get('promo') === 'applied' ? 'Promo code applied.' : undefined)}
      <p ${tid(pc, 'shipping-line')} data-method="${esc(method?.id)}" data-pence="${method?.pricePence ?? 0}">Delivery: ${esc(method?.label)} (<a href="/checkout/shipping">change</a>)</p>
      <h2>Promo code</h2>${promo}
      <h2>Pay with</h2>
      <form method="post" action="/checkout/payment" ${tid(pc, 'payment-form')}><fieldset><legend>Saved cards</legend>${saved}
        <label class="choice"><input type="radio" name="method" value="new"${chosen === 'new' ? ' checked' : ''} ${tid(pc, 'new-card')}> A new card</label></fieldset>
        <fieldset><legend>New card</legend><p class="hint">Test card: 4242 4242 4242 4242, any future expiry date, any 3-digit security code.</p>
        ${f('cardNumber', 'Card number', { autocomplete: 'cc-number', inputmode: 'numeric' })}${f('expiry', 'Expiry date (MM/YY)', { autocomplete: 'cc-exp', width: 'short' })}
        ${f('cvc', 'Security code', { autocomplete: 'cc-csc', width: 'short', inputmode: 'numeric' })}${f('cardName', 'Name on card', { autocomplete: 'cc-name' })}</fieldset>
        ${totalsTable(pc, t, c.promoCode)}
        ${submitButton(pc, 'payment-submit', 'Continue to review', 'Next')}</form>`;
    return page(pc, 'payment', 'Payment', main, status);
  };
  router.get(
    '/checkout/payment',
    guarded('payment', (req, account) => paymentPage(req, account)),
  );
  router.post(
    '/checkout/promo',
    guarded('payment', (req, account, cart) => {
      const result = checkPromo(req.form.get('promoCode') ?? '', computeTotals(cart.lines).subtotalPence);
      if (!result.ok) return paymentPage(req, account, [result.error], 400, {}, result.error);
      rt.store.update(() => {
        cart.checkout.promoCode = result.code;
      });
      return redirect('/checkout/payment?promo=applied');
    }),
  );
  router.post(
    '/checkout/promo/remove',
    guarded('payment', (_req, _account, cart) => {
      rt.store.update(() => {
        delete cart.checkout.promoCode;
      });
      return redirect('/checkout/payment');
    }),
  );
  router.post(
    '/checkout/payment',
    guarded('payment', (req, account, cart) => {
      // A person who typed a card number without ticking "A new card" meant the new card.
      const typedCard = (req.form.get('cardNumber') ?? '').trim() !== '';
      const method = req.form.get('method') || (typedCard ? 'new' : '');
      let outcome: ReturnType<typeof authorizeNewCard> | ReturnType<typeof authorizeSavedCard>;
      if (method === 'new') outcome = authorizeNewCard(req.form);
      else {
        const card = (rt.data.savedCards[account.username] ?? []).find((c) => c.id === method);
        if (!card) return paymentPage(req, account, ['Choose how you want to pay'], 400);
        outcome = authorizeSavedCard(card);
      }
      if (!outcome.ok) {
        const cardErrors = 'errors' in outcome ? outcome.errors : {};
        const list = outcome.decline ? [outcome.decline] : Object.values(cardErrors);
        return paymentPage(req, account, list, outcome.decline ? 402 : 400, cardErrors);
      }
      const payment = outcome.payment;
      rt.store.update(() => {
        cart.checkout.payment = payment;
      });
      return redirect('/checkout/review');
    }),
  );

  router.get(
    '/checkout/review',
    guarded('review', (req, _account, cart) => {
      const pc = rt.page(req);
      const c = cart.checkout;
      const t = computeTotals(cart.lines, c.shippingMethod, c.promoCode);
      const method = SHIPPING_METHODS.find((m) => m.id === c.shippingMethod);
      const main = `<h1>Review your order</h1>${errorBox(pc, (req.query.get('error') ?? '') ? [req.query.get('error') ?? ''] : [])}
        ${cartLines(pc, cart.lines, false)}
        <dl class="kv"><dt>Deliver to</dt><dd ${tid(pc, 'review-address')} data-postcode="${esc(c.address?.postcode)}">${c.address ? formatAddress(c.address) : ''} <a href="/checkout/address">Change</a></dd>
        <dt>Delivery</dt><dd ${tid(pc, 'review-shipping')} data-method="${esc(method?.id)}">${esc(method?.label)} <a href="/checkout/shipping">Change</a></dd>
        <dt>Payment</dt><dd ${tid(pc, 'payment-summary')} data-brand="${esc(c.payment?.brand)}" data-last4="${esc(c.payment?.last4)}">${esc(c.payment?.brand)} ending ${esc(c.payment?.last4)} <a href="/checkout/payment">Change</a></dd></dl>
        ${totalsTable(pc, t, c.promoCode)}
        <form method="post" action="/orders" ${tid(pc, 'place-order-form')}>${hidden('idempotencyKey', randomUUID())}
          <p class="muted">By placing your order you agree to the demo shop's terms. Your card is charged now.</p>
          ${submitButton(pc, 'place-order', `Place order and pay ${money(t.totalPence)}`, 'Buy now')}</form>`;
      return page(
        pc,
        'review',
        'Review your order',
        byLayout(pc, main, `<div class="v2-review">${main}</div>`),
      );
    }),
  );
}
