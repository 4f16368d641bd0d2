/**
 * Placing an order (idempotent by key while the site de-duplicates: a repeated key answers
 * with the order it already placed; with de-duplication off every request places a new
 * order, the key kept as its reference), the confirmation page, and the orders page that
 * finds orders by their key (`/orders?key=...`).
 */

import { formatAddress } from '../http/address.ts';
import { byLayout, errorBox, esc, money, noticeBox, renderPage, tid } from '../http/html.ts';
import type { Router } from '../http/router.ts';
import { html, redirect, withQuery } from '../http/router.ts';
import type { SiteRuntime } from '../http/runtime.ts';
import { computeTotals, findProduct, SHIPPING_METHODS } from './catalogue.ts';
import type { Order, ShopData } from './data.ts';
import { cartOf } from './data.ts';
import { totalsTable } from './views.ts';

/** Printable ASCII, no spaces: job ids and step ids make `jobId:stepId`. */
const KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

/** Registers `POST /orders`, `GET /orders/:id` and `GET /orders`. */
export function registerOrderRoutes(router: Router, rt: SiteRuntime<ShopData>): void {
  router.post(
    '/orders',
    rt.signedIn((req, account) => {
      const key = (req.form.get('idempotencyKey') ?? '').trim();
      if (!KEY_PATTERN.test(key)) {
        return redirect(
          withQuery('/checkout/review', {
            error: 'Your order could not be placed: reload the page and try again.',
          }),
        );
      }
      rt.store.update(() => rt.noteKeyAttempt(key));
      if (rt.refusal) {
        return redirect(
          withQuery('/checkout/review', { error: `Your order could not be placed. ${rt.refusal}` }),
        );
      }
      const existing = rt.earlierWrite(() => rt.data.orders.find((o) => o.key === key));
      if (existing) {
        if (existing.username !== account.username) {
          return html(
            renderPage(rt.page(req), {
              title: 'Conflict',
              main: errorBox(rt.page(req), ['This order reference belongs to another account.']),
              page: 'conflict',
            }),
            409,
          );
        }
        return redirect(`/orders/${existing.id}?repeat=1`);
      }
      const basket = cartOf(rt.data, account.username);
      // A shop that de-duplicates nothing takes the order from the form itself: the same form
      // sent again (by a person, or by the browser on its own) places the order again.
      const resent = !rt.guardsByState && basket.lines.length === 0 && basket.submitted?.form === key;
      const cart = resent && basket.submitted ? basket.submitted : basket;
      const c = cart.checkout;
      if (cart.lines.length === 0) return redirect('/cart?notice=Your+cart+is+empty');
      if (!c.address) return redirect('/checkout/address');
      if (!c.shippingMethod) return redirect('/checkout/shipping');
      if (!c.payment) return redirect('/checkout/payment');
      const order: Order = {
        id: `HS-${rt.data.nextOrderNumber}`,
        key,
        username: account.username,
        placedAt: new Date().toISOString(),
        lines: cart.lines.map((l) => ({
          sku: l.sku,
          name: findProduct(l.sku)?.name ?? l.sku,
          quantity: l.quantity,
          unitPence: findProduct(l.sku)?.pricePence ?? 0,
        })),
        address: c.address,
        shippingMethod: c.shippingMethod,
        ...(c.promoCode ? { promoCode: c.promoCode } : {}),
        payment: { brand: c.payment.brand, last4: c.payment.last4 },
        totals: computeTotals(cart.lines, c.shippingMethod, c.promoCode),
      };
      rt.store.update((state) => {
        state.data.orders.push(order);
        state.data.nextOrderNumber += 1;
        if (!rt.guardsByState) basket.submitted = { form: key, lines: cart.lines, checkout: cart.checkout };
        basket.lines = [];
        basket.checkout = {};
      });
      return rt.committed(redirect(`/orders/${order.id}`));
    }),
  );

  router.get(
    '/orders/:id',
    rt.signedIn((req, account) => {
      const pc = rt.page(req);
      const order = rt.data.orders.find((o) => o.id === req.params.id && o.username === account.username);
      if (!order)
        return html(
          renderPage(pc, { title: 'Not found', main: '<h1>Order not found</h1>', page: 'missing' }),
          404,
        );
      const method = SHIPPING_METHODS.find((m) => m.id === order.shippingMethod);
      const lines = order.lines
        .map((l) => `<li>${l.quantity} × ${esc(l.name)} (${money(l.unitPence)})</li>`)
        .join('');
      const main = `${noticeBox(pc, req.query.get('repeat') ? 'This order was already placed; it was not placed again.' : undefined)}
        <div ${tid(pc, 'order-confirmation')} data-order-id="${esc(order.id)}" data-key="${esc(order.key)}" data-total="${order.totals.totalPence}">
        <h1>${byLayout(pc, 'Thank you: your order is confirmed', 'Order received')}</h1>
        <p>Order number <strong ${tid(pc, 'order-id')}>${esc(order.id)}</strong>, placed ${esc(new Date(order.placedAt).toUTCString())}.</p>
        <ul>${lines}</ul>${totalsTable(pc, order.totals, order.promoCode)}
        <dl class="kv"><dt>Deliver to</dt><dd>${formatAddress(order.address)}</dd><dt>Delivery</dt><dd>${esc(method?.label)}</dd>
        <dt>Paid with</dt><dd>${esc(order.payment.brand)} ending ${esc(order.payment.last4)}</dd>
        <dt>Order reference</dt><dd><code>${esc(order.key)}</code></dd></dl></div>
        <p><a href="/orders">All your orders</a> · <a href="/">Continue shopping</a></p>`;
      return html(renderPage(pc, { title: `Order ${order.id}`, main, page: 'order' }));
    }),
  );

  router.get(
    '/orders',
    rt.signedIn((req, account) => {
      const pc = rt.page(req);
      const key = (req.query.get('key') ?? '').trim();
      const mine = rt.data.orders.filter((o) => o.username === account.username && (!key || o.key === key));
      const row = (o: Order): string =>
        byLayout(
          pc,
          `<tr ${tid(pc, 'order-row')} data-order-id="${esc(o.id)}" data-key="${esc(o.key)}" data-total="${o.totals.totalPence}"><td><a href="/orders/${esc(o.id)}">${esc(o.id)}</a></td><td>${esc(new Date(o.placedAt).toUTCString())}</td><td><code>${esc(o.key)}</code></td><td class="num">${money(o.totals.totalPence)}</td></tr>`,
          `<li ${tid(pc, 'order-row')} data-order-id="${esc(o.id)}" data-key="${esc(o.key)}" data-total="${o.totals.totalPence}"><a href="/orders/${esc(o.id)}">${esc(o.id)}</a> · ${money(o.totals.totalPence)}</li>`,
        );
      const list = mine.length
        ? byLayout(
            pc,
            `<table><thead><tr><th>Order</th><th>Placed</th><th>Reference</th><th class="num">Total</th></tr></thead><tbody>${mine.map(row).join('')}</tbody></table>`,
            `<ul>${mine.map(row).join('')}</ul>`,
          )
        : `<p ${tid(pc, 'orders-empty')} data-key="${esc(key)}">${key ? `No order with reference “${esc(key)}”.` : 'You have not placed any orders yet.'}</p>`;
      const main = `<h1>Your orders</h1>
        <form method="get" action="/orders" ${tid(pc, 'order-search')}><label>Find by order reference <input name="key" value="${esc(key)}"></label> <button class="btn secondary" type="submit">Find</button></form>${list}`;
      return html(renderPage(pc, { title: 'Your orders', main, page: 'orders' }));
    }),
  );
}
