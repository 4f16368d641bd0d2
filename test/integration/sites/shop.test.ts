import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS, demoCredentials } from '../../../demo/accounts.ts';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { dataOf, errorsOf, SiteClient, toReview } from './http-client.ts';

let sites: StartedSites;
let admin: SiteAdmin;

beforeAll(async () => {
  sites = await startSites();
  admin = siteAdmin(sites.shop.baseUrl, sites.adminToken);
});

afterAll(async () => {
  await sites?.stop();
});

beforeEach(async () => {
  await admin.reset();
});

const ada = demoCredentials('shop', 'ada@example.com');

async function signedIn(): Promise<SiteClient> {
  const client = new SiteClient(sites.shop.baseUrl);
  const reply = await client.signIn(ada.username, ada.password);
  expect(reply.status).toBe(303);
  return client;
}

/** A basket with two mugs and a notebook, an address, standard delivery and the saved Visa 4242. */
function readyForReview(client: SiteClient): Promise<void> {
  return toReview(client, {
    items: { 'MUG-ENAMEL-BLU': 2, 'NB-A5-DOT': 1 },
    address: {
      name: 'Ada Lovelace',
      line1: '12 St James Square',
      city: 'London',
      postcode: 'SW1Y 4JH',
      country: 'GB',
    },
    shipping: 'standard',
  });
}

describe('Site: shop', () => {
  it('refuses a wrong password with the message a real site shows', async () => {
    const client = new SiteClient(sites.shop.baseUrl);
    const reply = await client.post('/signin', { username: ada.username, password: 'wrong', next: '/' });
    expect(reply.status).toBe(401);
    expect(errorsOf(reply.body)).toEqual(['Incorrect email address or password']);
    expect((await client.get('/cart')).location).toBe('/signin?next=%2Fcart');
  });

  it('signs in a TOTP account with the authenticator code and refuses a wrong code', async () => {
    const grace = demoCredentials('shop', 'grace@example.com');
    const client = new SiteClient(sites.shop.baseUrl);
    expect(
      (await client.post('/signin', { username: grace.username, password: grace.password })).location,
    ).toBe('/signin/code');
    const wrong = await client.post('/signin/code', { code: '000000' });
    expect(wrong.status).toBe(401);
    expect(errorsOf(wrong.body)).toEqual(['That code is incorrect or has expired']);
    expect((await client.signIn(grace.username, grace.password, grace.totpSecret)).location).toBe('/');
    expect((await client.get('/cart')).status).toBe(200);
  });

  it('sends the outbox account a code that completes the sign-in', async () => {
    const alan = DEMO_ACCOUNTS.shop.find((a) => a.mfa.kind === 'outbox');
    if (!alan) throw new Error('no outbox account');
    const client = new SiteClient(sites.shop.baseUrl);
    const first = await client.post('/signin', {
      username: alan.username,
      password: alan.password,
      next: '/orders',
    });
    expect(first.location).toBe('/signin/code');
    expect((await client.get('/signin/code')).body).toContain('•••• 0123');
    const code = await admin.latestCode(alan.username);
    expect(code).toMatch(/^\d{6}$/);
    expect((await client.post('/signin/code', { code: code ?? '' })).location).toBe('/orders');
    expect((await client.get('/orders')).status).toBe(200);
  });

  it('finds products by every word of the query', async () => {
    const client = new SiteClient(sites.shop.baseUrl);
    const mugs = await client.get('/search?q=mug');
    expect(dataOf(mugs.body, 'result-count', 'count')).toBe('3');
    const none = await client.get('/search?q=mug+notebook');
    expect(dataOf(none.body, 'result-count', 'count')).toBe('0');
    expect(none.body).toContain('data-testid="no-results"');
  });

  it.each([
    [{ sku: 'KETTLE-STOVE', quantity: '1' }, 'Sorry, this item is out of stock'],
    [{ sku: 'MUG-ENAMEL-BLU', quantity: '0' }, 'Enter a quantity from 1 to 10'],
    [{ sku: 'MUG-ENAMEL-BLU', quantity: '11' }, 'Enter a quantity from 1 to 10'],
  ])('refuses to add %o to the cart', async (form, message) => {
    const client = await signedIn();
    const reply = await client.post('/cart/add', form);
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(errorsOf(reply.body)).toEqual([message]);
  });

  it('shows every missing address field and keeps the basket where it was', async () => {
    const client = await signedIn();
    await client.post('/cart/add', { sku: 'PEN-GEL-3PK', quantity: '1' });
    const reply = await client.post('/checkout/address', {
      name: '',
      line1: '',
      city: '',
      postcode: 'NOT A CODE',
      country: 'GB',
    });
    expect(reply.status).toBe(400);
    expect(errorsOf(reply.body)).toEqual([
      'Enter the full name',
      'Enter address line 1, typically the building and street',
      'Enter a town or city',
      'Enter a real postcode',
    ]);
    expect((await client.get('/checkout/shipping')).location).toBe('/checkout/address');
  });

  it.each([
    ['NOPE', '“NOPE” is not a valid promo code'],
    ['SUMMER2019', 'Promo code SUMMER2019 expired on 31 August 2019'],
    ['', 'Enter a promo code'],
  ])('refuses promo code %j', async (promoCode, message) => {
    const client = await signedIn();
    await readyForReview(client);
    const reply = await client.post('/checkout/promo', { promoCode });
    expect(reply.status).toBe(400);
    expect(errorsOf(reply.body)).toEqual([message]);
  });

  it('applies a valid promo code to the totals', async () => {
    const client = await signedIn();
    await readyForReview(client);
    expect((await client.post('/checkout/promo', { promoCode: 'save10' })).location).toBe(
      '/checkout/payment?promo=applied',
    );
    const review = await client.get('/checkout/review');
    // 2 x 12.00 + 9.50 = 33.50; 10% = 3.35; delivery 3.95
    expect(dataOf(review.body, 'totals', 'subtotal')).toBe('3350');
    expect(dataOf(review.body, 'totals', 'discount')).toBe('335');
    expect(dataOf(review.body, 'totals', 'total')).toBe(String(3350 - 335 + 395));
  });

  it.each([
    [
      { cardNumber: '4242 4242 4242 4241', expiry: '12/34', cvc: '123', cardName: 'A L' },
      'Your card number is invalid.',
      400,
    ],
    [
      { cardNumber: '4000 0000 0000 0002', expiry: '12/34', cvc: '123', cardName: 'A L' },
      'Your card was declined.',
      402,
    ],
    [
      { cardNumber: '4242 4242 4242 4242', expiry: '01/20', cvc: '123', cardName: 'A L' },
      'Your card has expired.',
      400,
    ],
    [{ cardNumber: '', expiry: '', cvc: '', cardName: '' }, 'Enter the card number', 400],
  ])('refuses the new card %o', async (card, message, status) => {
    const client = await signedIn();
    await readyForReview(client);
    const reply = await client.post('/checkout/payment', { method: 'new', ...card });
    expect(reply.status).toBe(status);
    expect(errorsOf(reply.body)[0]).toBe(message);
    expect(reply.body).not.toContain(card.cardNumber.replace(/ /g, '').slice(0, 12) || 'no-number');
  });

  it('declines the saved card ending 0002 and accepts a valid new card', async () => {
    const client = await signedIn();
    await readyForReview(client);
    const declined = await client.post('/checkout/payment', { method: 'pm_visa_0002' });
    expect(declined.status).toBe(402);
    expect(errorsOf(declined.body)).toEqual(['Your card was declined.']);
    const ok = await client.post('/checkout/payment', {
      method: 'new',
      cardNumber: '4242424242424242',
      expiry: '12/34',
      cvc: '123',
      cardName: 'Ada',
    });
    expect(ok.location).toBe('/checkout/review');
    expect(dataOf((await client.get('/checkout/review')).body, 'payment-summary', 'last4')).toBe('4242');
  });

  it('places one order per idempotency key, however often the key is sent', async () => {
    const client = await signedIn();
    await readyForReview(client);
    const first = await client.post('/orders', { idempotencyKey: 'job-1:place-order' });
    expect(first.location).toMatch(/^\/orders\/HS-\d+$/);
    const again = await client.post('/orders', { idempotencyKey: 'job-1:place-order' });
    expect(again.location).toBe(`${first.location}?repeat=1`);
    const writes = await admin.writes();
    expect(writes.countsByKey).toEqual({ 'job-1:place-order': 1 });
    expect(writes.attemptsByKey['job-1:place-order']).toBe(2);
    const confirmation = await client.get(first.location ?? '');
    expect(dataOf(confirmation.body, 'order-confirmation', 'key')).toBe('job-1:place-order');
    expect(dataOf(confirmation.body, 'order-confirmation', 'total')).toBe(String(2400 + 950 + 395));
    const byKey = await client.get('/orders?key=job-1%3Aplace-order');
    expect(dataOf(byKey.body, 'order-row', 'order-id')).toBe(first.location?.split('/').pop());
    const other = await client.get('/orders?key=job-2%3Aplace-order');
    expect(other.body).toContain('data-testid="orders-empty"');
  });

  it('refuses to place an order without a reference or with an empty basket', async () => {
    const client = await signedIn();
    expect((await client.post('/orders', { idempotencyKey: '' })).location).toMatch(
      /^\/checkout\/review\?error=/,
    );
    expect((await client.post('/orders', { idempotencyKey: 'k-empty' })).location).toBe(
      '/cart?notice=Your+cart+is+empty',
    );
    expect((await admin.writes()).count).toBe(0);
  });
});
