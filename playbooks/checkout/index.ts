/**
 * `checkout@1`: buys two items in the demo shop in fourteen steps. Every step but the last is
 * a read (re-running converges: adding skips an item already in the cart, forms set absolute
 * values); placing the order is the one write, approved by a person first, sent with the
 * step's idempotency key, verified by the confirmation page and probed on the orders page.
 */
import { definePlaybook, type Playbook } from 'belay/sdk';
import { shop as shopApplication } from '../demo-sites.ts';
import { addItemA, addItemB, openCart, openShop, search, setQuantity, signIn } from './browse-steps.ts';
import {
  applyPromo,
  paymentDetails,
  review,
  shippingAddress,
  shippingMethod,
  startCheckout,
} from './checkout-steps.ts';
import type { CheckoutInputs } from './inputs.ts';
import { checkoutInputSchema } from './inputs.ts';
import { placeOrder } from './place-order.ts';

export type { CheckoutInputs } from './inputs.ts';
export { checkoutInputSchema } from './inputs.ts';

export const checkoutPlaybook: Playbook<CheckoutInputs> = definePlaybook<CheckoutInputs>({
  name: 'checkout',
  version: 1,
  description:
    'Search the shop, put two items in the cart, check out with a saved card and place the order (approved first).',
  inputSchema: checkoutInputSchema,
  applications: { shop: shopApplication },
  steps: [
    openShop,
    signIn,
    search,
    addItemA,
    addItemB,
    setQuantity,
    openCart,
    startCheckout,
    shippingAddress,
    shippingMethod,
    applyPromo,
    paymentDetails,
    review,
    placeOrder,
  ],
  exampleInputs: {
    search: 'mug',
    items: [
      { sku: 'MUG-ENAMEL-BLU', quantity: 2 },
      { sku: 'MUG-STONE-GRY', quantity: 1 },
    ],
    shippingAddress: {
      name: 'Ada Lovelace',
      line1: "12 St James's Square",
      city: 'London',
      postcode: 'SW1Y 4JH',
      country: 'GB',
    },
    shippingMethod: 'standard',
    promoCode: 'SAVE10',
    payment: { savedCardLast4: '4242' },
  },
});

export default checkoutPlaybook;
