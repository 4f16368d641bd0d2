/** Where a checkout step starts: the shared precondition and restore of the shop's steps. */
import { appUrl, checkStart, goto, type Step, tid } from 'belay/sdk';
import { shop as shopApplication } from '../demo-sites.ts';
import type { CheckoutInputs } from './inputs.ts';

/** The checkout's application. */
export const APP = 'shop';

/**
 * Precondition and restore of a shop step that starts at `path` (exactly) once the element
 * `ready` (a test id) shows: the precondition tells a signed-out page, a wrong page and a
 * changed layout apart; the restore navigates back to `path` from server-side state.
 *
 * @example
 * export const openCart: Step<CheckoutInputs> = { id: 'open-cart', ...startsAt('/cart/added', 'view-cart'), ... };
 */
export function startsAt(
  path: string,
  ready: string,
): Pick<Step<CheckoutInputs>, 'precondition' | 'restore'> {
  const re = new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
  return {
    precondition: (page, ctx) =>
      checkStart(page, ctx, { app: APP, application: shopApplication, path: re, ready: tid(ready) }),
    restore: async (page, ctx) => goto(page, appUrl(ctx, APP, path)),
  };
}
