/** Pieces of the shop's pages shared by several routes. */
import type { PageContext } from '../http/html.ts';
import { byLayout, esc, money, submitButton, tid } from '../http/html.ts';
import type { Product, Totals } from './catalogue.ts';
import { findProduct, promoLabel } from './catalogue.ts';
import type { CartLine } from './data.ts';

/** The header's search box and basket link. */
export function shopHeader(pc: PageContext, query: string, cartUnits: number | undefined): string {
  const cart =
    cartUnits === undefined
      ? ''
      : `<a href="/cart" class="cart-link" ${tid(pc, 'header-cart')} data-units="${cartUnits}">${byLayout(pc, 'Cart', 'Basket')} (${cartUnits})</a>`;
  return `<form method="get" action="/search" role="search" class="search" ${tid(pc, 'search-form')}>
    <input type="search" name="q" value="${esc(query)}" placeholder="Search products" aria-label="Search products" ${tid(pc, 'search-input')}>
    ${submitButton(pc, 'search-submit', 'Search', 'Find')}</form>${cart}`;
}

/** A product tile (home page and search results). */
export function productCard(pc: PageContext, p: Product, query: string, inCart: number): string {
  const href = `/products/${encodeURIComponent(p.sku)}${query ? `?q=${encodeURIComponent(query)}` : ''}`;
  const badge =
    inCart > 0
      ? `<span class="tag" ${tid(pc, 'in-cart')} data-quantity="${inCart}">In cart: ${inCart}</span>`
      : '';
  return `<article class="card" ${tid(pc, 'result')} data-sku="${esc(p.sku)}">
    <h3><a href="${esc(href)}" ${tid(pc, 'result-link')}>${esc(p.name)}</a></h3>
    <p class="muted">${esc(p.description)}</p>
    <p><strong>${money(p.pricePence)}</strong> ${p.stock === 0 ? '<span class="tag">Out of stock</span>' : ''} ${badge}</p>
  </article>`;
}

/** Basket lines: with quantity inputs (`editable`) or read-only. */
export function cartLines(pc: PageContext, lines: readonly CartLine[], editable: boolean): string {
  const rows = lines.map((line) => {
    const p = findProduct(line.sku);
    const qty = editable
      ? `<input type="number" min="0" max="10" name="qty_${esc(line.sku)}" value="${line.quantity}" class="short" aria-label="Quantity of ${esc(p?.name ?? line.sku)}" ${tid(pc, 'line-qty')}>`
      : `<span ${tid(pc, 'line-qty')}>${line.quantity}</span>`;
    const linePence = (p?.pricePence ?? 0) * line.quantity;
    return byLayout(
      pc,
      `<tr ${tid(pc, 'line')} data-sku="${esc(line.sku)}" data-quantity="${line.quantity}"><td>${esc(p?.name ?? line.sku)}<br><span class="muted">${esc(line.sku)}</span></td><td class="num">${money(p?.pricePence ?? 0)}</td><td class="num">${qty}</td><td class="num">${money(linePence)}</td></tr>`,
      `<li class="v2-line" ${tid(pc, 'line')} data-sku="${esc(line.sku)}" data-quantity="${line.quantity}"><b>${esc(p?.name ?? line.sku)}</b> · ${qty} × ${money(p?.pricePence ?? 0)} = ${money(linePence)}</li>`,
    );
  });
  return byLayout(
    pc,
    `<table class="lines"><thead><tr><th>Item</th><th class="num">Price</th><th class="num">Quantity</th><th class="num">Total</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
    `<ul class="v2-lines">${rows.join('')}</ul>`,
  );
}

/** The totals table, with the amounts also as `data-*` attributes (pence). */
export function totalsTable(pc: PageContext, t: Totals, promoCode?: string, deliveryChosen = true): string {
  const row = (label: string, value: string, cls = ''): string =>
    `<tr class="${cls}"><td>${esc(label)}</td><td class="num">${value}</td></tr>`;
  return `<table class="totals" ${tid(pc, 'totals')} data-subtotal="${t.subtotalPence}" data-discount="${t.discountPence}" data-shipping="${t.shippingPence}" data-total="${t.totalPence}" data-units="${t.units}" data-lines="${t.lines}">
    ${row(`Subtotal (${t.units} item${t.units === 1 ? '' : 's'})`, money(t.subtotalPence))}
    ${promoCode ? row(`Promo ${promoCode}: ${promoLabel(promoCode)}`, money(-t.discountPence)) : ''}
    ${row('Delivery', deliveryChosen ? money(t.shippingPence) : 'chosen at checkout')}
    ${row(deliveryChosen ? 'Total (VAT included)' : 'Total so far (VAT included)', money(t.totalPence), 'total')}
  </table>`;
}

const STEPS = [
  ['address', 'Address'],
  ['shipping', 'Delivery'],
  ['payment', 'Payment'],
  ['review', 'Review'],
] as const;

/** The "Address › Delivery › Payment › Review" trail. */
export function checkoutSteps(pc: PageContext, current: (typeof STEPS)[number][0]): string {
  const items = STEPS.map(([id, label]) => `<li class="${id === current ? 'on' : ''}">${label}</li>`).join(
    '',
  );
  return `<ol class="steps" aria-label="Checkout steps" ${tid(pc, 'checkout-steps')}>${items}</ol>`;
}
