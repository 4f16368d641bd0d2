/** Shop pages before checkout: home, search, product, add to basket, the "added" page, the basket. */
import type { DemoAccount } from '../../accounts.ts';
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
import { html, redirect, withQuery } from '../http/router.ts';
import type { SiteRuntime } from '../http/runtime.ts';
import { computeTotals, findProduct, MAX_QUANTITY, PRODUCTS, searchProducts } from './catalogue.ts';
import type { ShopData } from './data.ts';
import { cartOf } from './data.ts';
import { cartLines, productCard, totalsTable } from './views.ts';

function inCart(rt: SiteRuntime<ShopData>, req: SiteRequest, sku: string): number {
  const user = rt.user(req);
  if (!user) return 0;
  return rt.data.carts[user.username]?.lines.find((l) => l.sku === sku)?.quantity ?? 0;
}

function parseQuantity(raw: string | null, min: number): number | undefined {
  const n = Number((raw ?? '').trim());
  return Number.isInteger(n) && n >= min && n <= MAX_QUANTITY && (raw ?? '').trim() !== '' ? n : undefined;
}

/** Registers the browsing and basket routes. */
export function registerBrowseRoutes(router: Router, rt: SiteRuntime<ShopData>): void {
  router.get('/', (req) => {
    const pc = rt.page(req);
    const tiles = PRODUCTS.slice(0, 6)
      .map((p) => productCard(pc, p, '', inCart(rt, req, p.sku)))
      .join('');
    const main = `<h1 ${tid(pc, 'shop-home')}>${byLayout(pc, 'Everyday goods, delivered', 'Welcome back to the shop')}</h1>
      <p class="muted">Search the catalogue above, or start with these:</p><div class="grid">${tiles}</div>`;
    return html(renderPage(pc, { title: 'Home', main, page: 'home' }));
  });

  router.get('/search', (req) => {
    const pc = rt.page(req);
    const q = (req.query.get('q') ?? '').trim();
    const results = searchProducts(q);
    const list = results.length
      ? `<div class="grid" ${tid(pc, 'results')}>${results.map((p) => productCard(pc, p, q, inCart(rt, req, p.sku))).join('')}</div>`
      : `<p ${tid(pc, 'no-results')}>No products match “${esc(q)}”. Try another word, such as mug or notebook.</p>`;
    const main = `<h1>Search results</h1><p ${tid(pc, 'result-count')} data-count="${results.length}" data-query="${esc(q)}">${results.length} result${results.length === 1 ? '' : 's'} for “${esc(q)}”</p>${list}`;
    return html(renderPage(pc, { title: `Search: ${q}`, main, page: 'search' }));
  });

  const productPage = (req: SiteRequest, sku: string, errors: string[] = [], status = 200): SiteResponse => {
    const pc = rt.page(req);
    const p = findProduct(sku);
    if (!p)
      return html(
        renderPage(pc, { title: 'Not found', main: '<h1>Product not found</h1>', page: 'missing' }),
        404,
      );
    const q = req.query.get('q') ?? req.form.get('q') ?? '';
    const have = inCart(rt, req, p.sku);
    const form =
      p.stock === 0
        ? `<p class="tag" ${tid(pc, 'out-of-stock')}>Out of stock</p>`
        : `<form method="post" action="/cart/add" ${tid(pc, 'add-form')}>${hidden('sku', p.sku)}${hidden('q', q)}
           ${field(pc, { name: 'quantity', label: 'Quantity', value: '1', type: 'number', width: 'short' })}
           ${submitButton(pc, 'add-to-cart', 'Add to cart', 'Add to basket')}</form>`;
    const main = `${errorBox(pc, errors)}<p><a href="${esc(q ? withQuery('/search', { q }) : '/')}" ${tid(pc, 'back-to-results')}>‹ Back</a></p>
      <h1 ${tid(pc, 'product-name')} data-sku="${esc(p.sku)}">${esc(p.name)}</h1>
      <p>${esc(p.description)}</p><p class="muted">SKU ${esc(p.sku)}</p>
      <p><strong ${tid(pc, 'product-price')} data-pence="${p.pricePence}">${money(p.pricePence)}</strong></p>
      ${have > 0 ? `<p class="notice" ${tid(pc, 'in-cart')} data-quantity="${have}">In your cart: ${have}</p>` : ''}${form}`;
    return html(renderPage(pc, { title: p.name, main, page: 'product' }), status);
  };

  router.get('/products/:sku', (req) => productPage(req, req.params.sku ?? ''));

  router.post(
    '/cart/add',
    rt.signedIn((req, account) => {
      const sku = req.form.get('sku') ?? '';
      const p = findProduct(sku);
      if (!p) return productPage(req, sku, [], 404);
      const qty = parseQuantity(req.form.get('quantity'), 1);
      if (p.stock === 0) return productPage(req, sku, ['Sorry, this item is out of stock'], 409);
      if (qty === undefined)
        return productPage(req, sku, [`Enter a quantity from 1 to ${MAX_QUANTITY}`], 400);
      const cart = cartOf(rt.data, account.username);
      const line = cart.lines.find((l) => l.sku === sku);
      if ((line?.quantity ?? 0) + qty > MAX_QUANTITY) {
        return productPage(req, sku, [`You can have up to ${MAX_QUANTITY} of this item in your cart`], 400);
      }
      rt.store.update(() => {
        if (line) line.quantity += qty;
        else cart.lines.push({ sku, quantity: qty });
      });
      return redirect(withQuery('/cart/added', { sku, q: req.form.get('q') ?? undefined }));
    }),
  );

  const addedPage = (
    req: SiteRequest,
    account: DemoAccount,
    errors: string[] = [],
    status = 200,
  ): SiteResponse => {
    const pc = rt.page(req);
    const cart = cartOf(rt.data, account.username);
    const sku = req.query.get('sku') ?? req.form.get('sku') ?? '';
    const q = req.query.get('q') ?? req.form.get('q') ?? '';
    const p = findProduct(sku);
    const back = withQuery('/cart/added', { sku, q });
    const head = p
      ? `<h1 ${tid(pc, 'added-item')} data-sku="${esc(p.sku)}">Added to your cart: ${esc(p.name)}</h1>`
      : `<h1 ${tid(pc, 'added-item')} data-sku="">Your cart</h1>`;
    const notice = req.query.get('updated') ? 'Quantities updated.' : undefined;
    const main = `${errorBox(pc, errors)}${noticeBox(pc, notice)}${head}
      <form method="post" action="/cart/update" ${tid(pc, 'quantities-form')}>${hidden('returnTo', back)}
        ${cartLines(pc, cart.lines, true)}${totalsTable(pc, computeTotals(cart.lines), undefined, false)}
        ${submitButton(pc, 'update-quantities', 'Update quantities', 'Save changes', true)}</form>
      <p class="actions"><a class="btn secondary" href="${esc(q ? withQuery('/search', { q }) : '/')}" ${tid(pc, 'continue-shopping')}>Continue shopping</a>
        <a class="btn" href="/cart" ${tid(pc, 'view-cart')}>${byLayout(pc, 'View cart', 'Go to basket')}</a></p>`;
    return html(renderPage(pc, { title: 'Added to cart', main, page: 'cart-added' }), status);
  };

  router.get(
    '/cart/added',
    rt.signedIn((req, account) => addedPage(req, account)),
  );

  const cartPage = (
    req: SiteRequest,
    account: DemoAccount,
    errors: string[] = [],
    status = 200,
  ): SiteResponse => {
    const pc = rt.page(req);
    const cart = cartOf(rt.data, account.username);
    const notice = req.query.get('updated')
      ? 'Your cart was updated.'
      : (req.query.get('notice') ?? undefined);
    const body = cart.lines.length
      ? `<form method="post" action="/cart/update" ${tid(pc, 'cart-form')}>${hidden('returnTo', '/cart')}
          ${cartLines(pc, cart.lines, true)}${submitButton(pc, 'update-cart', 'Update cart', 'Save basket', true)}</form>
          ${totalsTable(pc, computeTotals(cart.lines), undefined, false)}
          <p><a class="btn" href="/checkout" ${tid(pc, 'checkout-button')}>${byLayout(pc, 'Checkout', 'Proceed to purchase')}</a></p>`
      : `<p ${tid(pc, 'cart-empty')}>Your cart is empty. <a href="/">Find something</a>.</p>`;
    const main = `${errorBox(pc, errors)}${noticeBox(pc, notice)}<h1>${byLayout(pc, 'Your cart', 'Basket')}</h1>${body}`;
    return html(renderPage(pc, { title: 'Cart', main, page: 'cart' }), status);
  };

  router.get(
    '/cart',
    rt.signedIn((req, account) => cartPage(req, account)),
  );

  router.post(
    '/cart/update',
    rt.signedIn((req, account) => {
      const returnTo = req.form.get('returnTo') ?? '/cart';
      const toAdded = returnTo.startsWith('/cart/added');
      const cart = cartOf(rt.data, account.username);
      const wanted = new Map<string, number>();
      for (const line of cart.lines) {
        const raw = req.form.get(`qty_${line.sku}`);
        if (raw === null) continue;
        const qty = parseQuantity(raw, 0);
        if (qty === undefined) {
          const errors = [
            `Enter a quantity from 0 to ${MAX_QUANTITY} for ${findProduct(line.sku)?.name ?? line.sku}`,
          ];
          if (!toAdded) return cartPage(req, account, errors, 400);
          const back = new URL(returnTo, 'http://x');
          return addedPage({ ...req, query: back.searchParams }, account, errors, 400);
        }
        wanted.set(line.sku, qty);
      }
      rt.store.update(() => {
        for (const line of cart.lines) line.quantity = wanted.get(line.sku) ?? line.quantity;
        cart.lines = cart.lines.filter((l) => l.quantity > 0);
      });
      const target = toAdded ? returnTo : '/cart';
      return redirect(`${target}${target.includes('?') ? '&' : '?'}updated=1`);
    }),
  );

  router.get(
    '/checkout',
    rt.signedIn(() => redirect('/checkout/address')),
  );
}
