/** Checkout steps 1 to 7: open the shop, sign in, search, add items A and B, set quantities, open the cart. */

import {
  appUrl,
  clickAndWait,
  dataAttr,
  EVIDENCE_TIMEOUT_MS,
  type Evidence,
  goto,
  hasVisibleError,
  isAt,
  type Step,
  StepActionError,
  type StepContext,
  signInStep,
  tid,
  visibleWithin,
} from 'belay/sdk';
import { shop as shopApplication } from '../demo-sites.ts';
import type { CheckoutInputs } from './inputs.ts';
import { APP, startsAt } from './starts-at.ts';

type S = Step<CheckoutInputs>;
type Ctx = StepContext<CheckoutInputs>;

/** The results of the job's search (items A and B start there). */
const searchPath = (ctx: Ctx): string => `/search?q=${encodeURIComponent(ctx.inputs.search)}`;

export const openShop: S = {
  id: 'open-shop',
  title: 'Open the shop',
  kind: 'read',
  app: APP,
  // The first step starts anywhere (a new session's blank page included): its run navigates.
  precondition: async () => ({ ok: true }),
  restore: async () => undefined,
  run: async (page, ctx) => goto(page, appUrl(ctx, APP, '/')),
  verify: async (page, ctx) =>
    isAt(page, ctx, APP, /^\/$/) && (await visibleWithin(page, tid('shop-home'), EVIDENCE_TIMEOUT_MS))
      ? { page: 'home' }
      : null,
};

export const signIn: S = signInStep('sign-in', APP, shopApplication);

export const search: S = {
  id: 'search',
  title: 'Search the catalogue',
  kind: 'read',
  app: APP,
  ...startsAt('/', 'search-input'),
  async run(page, ctx) {
    await page.locator(tid('search-input')).fill(ctx.inputs.search);
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('search-submit'));
  },
  async verify(page, ctx) {
    if (!isAt(page, ctx, APP, /^\/search$/)) return null;
    const count = Number(await dataAttr(page, tid('result-count'), 'count'));
    if (!(count > 0)) return null;
    for (const item of ctx.inputs.items) {
      if (!(await page.locator(`${tid('result')}[data-sku="${item.sku}"]`).count())) return null;
    }
    return { query: ctx.inputs.search, results: count };
  },
};

/** Adds item `index` from the search results, unless the cart already holds it (so a re-run adds nothing twice). */
function addItem(index: 0 | 1): S {
  const label = index === 0 ? 'A' : 'B';
  const id = `add-item-${label.toLowerCase()}`;
  return {
    id,
    title: `Add item ${label} to the cart`,
    kind: 'read',
    app: APP,
    ...startsAt(searchPath, 'results'),
    async run(page, ctx) {
      const sku = ctx.inputs.items[index].sku;
      const link = `${tid('result')}[data-sku="${sku}"] ${tid('result-link')}`;
      if (!(await page.locator(link).count()))
        throw new StepActionError(id, `the results do not list ${sku}`);
      await clickAndWait(page, link);
      if (!(await visibleWithin(page, tid('in-cart'), 300))) {
        await ctx.faultPoint('mid-action');
        await clickAndWait(page, tid('add-to-cart'));
      } else if (index === 1) {
        await goto(page, appUrl(ctx, APP, `/cart/added?sku=${encodeURIComponent(sku)}`));
      }
      // Item A goes back to the results, where item B starts.
      if (index === 0) {
        if (await hasVisibleError(page)) return;
        await clickAndWait(page, `${tid('continue-shopping')}, ${tid('back-to-results')}`);
      }
    },
    async verify(page, ctx): Promise<Evidence | null> {
      const sku = ctx.inputs.items[index].sku;
      if (await hasVisibleError(page)) return null;
      if (index === 0) {
        if (!isAt(page, ctx, APP, /^\/search$/)) return null;
        const inCart = Number(
          await dataAttr(page, `${tid('result')}[data-sku="${sku}"] ${tid('in-cart')}`, 'quantity'),
        );
        return inCart > 0 ? { sku, inCart } : null;
      }
      if (!isAt(page, ctx, APP, /^\/cart\/added$/)) return null;
      const inCart = Number(await dataAttr(page, `${tid('line')}[data-sku="${sku}"]`, 'quantity'));
      const lines = await page.locator(tid('line')).count();
      return inCart > 0 ? { sku, inCart, lines } : null;
    },
  };
}

export const addItemA: S = addItem(0);
export const addItemB: S = addItem(1);

export const setQuantity: S = {
  id: 'set-quantity',
  title: 'Set the quantities',
  kind: 'read',
  app: APP,
  ...startsAt('/cart/added', 'quantities-form'),
  async run(page, ctx) {
    for (const item of ctx.inputs.items) {
      const input = page.locator(`${tid('line')}[data-sku="${item.sku}"] ${tid('line-qty')}`);
      if (!(await input.count()))
        throw new StepActionError('set-quantity', `the cart has no line for ${item.sku}`);
      await input.fill(String(item.quantity));
    }
    await ctx.faultPoint('mid-action');
    await clickAndWait(page, tid('update-quantities'));
  },
  async verify(page, ctx) {
    if (!isAt(page, ctx, APP, /^\/cart\/added$/) || (await hasVisibleError(page))) return null;
    let units = 0;
    for (const item of ctx.inputs.items) {
      const qty = Number(await dataAttr(page, `${tid('line')}[data-sku="${item.sku}"]`, 'quantity'));
      if (qty !== item.quantity) return null;
      units += qty;
    }
    return { lines: ctx.inputs.items.length, units };
  },
};

export const openCart: S = {
  id: 'open-cart',
  title: 'Open the cart',
  kind: 'read',
  app: APP,
  ...startsAt('/cart/added', 'view-cart'),
  run: async (page) => clickAndWait(page, tid('view-cart')),
  async verify(page, ctx) {
    if (!isAt(page, ctx, APP, /^\/cart$/) || (await hasVisibleError(page))) return null;
    const subtotal = Number(await dataAttr(page, tid('totals'), 'subtotal'));
    const units = Number(await dataAttr(page, tid('totals'), 'units'));
    for (const item of ctx.inputs.items) {
      if (!(await page.locator(`${tid('line')}[data-sku="${item.sku}"]`).count())) return null;
    }
    return Number.isFinite(subtotal) && subtotal > 0
      ? { lines: await page.locator(tid('line')).count(), units, subtotalPence: subtotal }
      : null;
  },
};
