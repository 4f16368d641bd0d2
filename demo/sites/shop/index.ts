/** The demo shop: catalogue, basket, checkout, orders. */
import { DEMO_ACCOUNTS } from '../../accounts.ts';
import type { SiteDefinition } from '../http/runtime.ts';
import { registerBrowseRoutes } from './browse.ts';
import { registerCheckoutRoutes } from './checkout.ts';
import type { ShopData } from './data.ts';
import { seedShop } from './data.ts';
import { registerOrderRoutes } from './orders.ts';
import { shopHeader } from './views.ts';

/** The shop's site definition (see `startSites`). */
export const shopSite: SiteDefinition<ShopData> = {
  info: { name: 'shop', title: 'Harbour Supply Co.', accent: '#0b6e4f' },
  accounts: DEMO_ACCOUNTS.shop,
  seed: seedShop,
  homePath: '/',
  nav: (signedIn) => (signedIn ? [{ href: '/orders', label: 'Your orders', testid: 'nav-orders' }] : []),
  headerExtra: (pc, req, rt) => {
    const user = rt.user(req);
    const units = user
      ? (rt.data.carts[user.username]?.lines.reduce((n, l) => n + l.quantity, 0) ?? 0)
      : undefined;
    return shopHeader(pc, req.path === '/search' ? (req.query.get('q') ?? '') : '', units);
  },
  routes: (router, rt) => {
    registerBrowseRoutes(router, rt);
    registerCheckoutRoutes(router, rt);
    registerOrderRoutes(router, rt);
  },
  writes: (data) => ({
    kind: 'order',
    items: data.orders.map((o) => ({
      key: o.key,
      orderId: o.id,
      username: o.username,
      placedAt: o.placedAt,
      totalPence: o.totals.totalPence,
      units: o.totals.units,
    })),
  }),
};
