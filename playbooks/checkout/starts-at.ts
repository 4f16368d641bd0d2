/** Where a checkout step starts: the SDK's `startsAt` for the shop. */
import { type StartsAtSpec, type Step, startsAt as startsAtPage, tid } from 'belay/sdk';
import { shop as shopApplication } from '../demo-sites.ts';
import type { CheckoutInputs } from './inputs.ts';

/** The checkout's application. */
export const APP = 'shop';

/**
 * Precondition and restore of a shop step that starts at `path` once the element `ready` (a
 * test id) shows. `path` may be a function of the context (a path with a query): the
 * precondition then wants its path without the query.
 *
 * @example
 * export const openCart: Step<CheckoutInputs> = { id: 'open-cart', ...startsAt('/cart/added', 'view-cart'), ... };
 */
export function startsAt(
  path: StartsAtSpec<CheckoutInputs>['path'],
  ready: string,
): Pick<Step<CheckoutInputs>, 'precondition' | 'restore'> {
  return startsAtPage<CheckoutInputs>({ app: APP, application: shopApplication, path, ready: tid(ready) });
}
