/** What the engine tests share: the demo tenant, the person acting, the demo jobs' inputs, the stack's settings. */
import type { Principal } from '../../lambdas/lib/auth/api-keys.ts';
import type { LocalStackOptions } from '../../local/stack.ts';
import type { CheckoutInputs } from '../../playbooks/checkout/index.ts';
import type { CrmBillingSyncInputs } from '../../playbooks/crm-billing-sync/index.ts';

export const TENANT = 'demo';
export const RUN_STEP = 'belay-run-step';

/** The person acting through the API in these tests (submitter and approver of the demo tenant). */
export const PERSON: Principal = {
  tenantId: TENANT,
  roles: ['submitter', 'approver'],
  keyId: 'blk_e2e0engine0',
};

/** `checkout@1` step ids, in order (place-order, index 13, is the one write). */
export const CHECKOUT_STEPS = [
  'open-shop',
  'sign-in',
  'search',
  'add-item-a',
  'add-item-b',
  'set-quantity',
  'open-cart',
  'start-checkout',
  'shipping-address',
  'shipping-method',
  'apply-promo',
  'payment-details',
  'review',
  'place-order',
] as const;
export const PLACE_ORDER = 13;

export const CHECKOUT_INPUTS: CheckoutInputs = {
  search: 'mug',
  items: [
    { sku: 'MUG-ENAMEL-BLU', quantity: 2 },
    { sku: 'MUG-STONE-GRY', quantity: 1 },
  ],
  shippingAddress: {
    name: 'Ada Lovelace',
    line1: '12 St James Sq',
    city: 'London',
    postcode: 'SW1Y 4JH',
    country: 'GB',
  },
  shippingMethod: 'standard',
  promoCode: 'SAVE10',
  payment: { savedCardLast4: '4242' },
};

export const SYNC_INPUTS: CrmBillingSyncInputs = {
  customerEmail: 'mei.chen@cobalt.example',
  address: { line1: '77 Temple Quay', city: 'Bristol', postcode: 'BS1 6DZ', country: 'GB' },
  phone: '+44 117 496 0999',
};

/** Settings every engine test stack runs with: short pauses, so a retry costs milliseconds. */
export const TEST_STACK_SETTINGS = {
  lambdaMode: 'warm',
  retryIntervalMs: 150,
  waitTimeOverrides: { RetryBackoff: 200, FinishBackoff: 200, WaitForCapacity: 500 },
  env: { BELAY_RETRY_BACKOFF_SECONDS: '0', BELAY_CAPACITY_POLL_SECONDS: '1', LOG_LEVEL: 'error' },
  // The recovery sweep runs when a test fires it (`stack.events.triggerSchedule`), not every 5 minutes.
  scheduleEveryMs: false,
} as const satisfies Partial<LocalStackOptions>;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
