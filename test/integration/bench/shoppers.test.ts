/**
 * The load-test shoppers the benchmark's concurrency section runs on: each can sign in to the
 * shop without MFA and pay with its saved Visa 4242, and each is connected to tenant `demo`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS, LOAD_TEST_SHOPPERS } from '../../../demo/accounts.ts';
import { type StartedSites, startSites } from '../../../demo/sites/index.ts';
import { seedShop } from '../../../demo/sites/shop/data.ts';
import { DEMO_CONNECTED, LOAD_TEST_CONNECTED, loadTestShopAccountId } from '../../../local/seed.ts';
import { SiteClient } from '../sites/http-client.ts';

let sites: StartedSites;

beforeAll(async () => {
  sites = await startSites();
});

afterAll(async () => {
  await sites?.stop();
});

describe('load-test shoppers', () => {
  it('are 20 distinct no-MFA shop accounts, added after the three demo accounts', () => {
    expect(LOAD_TEST_SHOPPERS.map((a) => a.username)).toEqual(
      Array.from({ length: 20 }, (_, i) => `shopper${String(i + 1).padStart(2, '0')}@example.com`),
    );
    expect(LOAD_TEST_SHOPPERS.every((a) => a.mfa.kind === 'none')).toBe(true);
    expect(DEMO_ACCOUNTS.shop.slice(0, 3).map((a) => a.username)).toEqual([
      'ada@example.com',
      'grace@example.com',
      'alan@example.com',
    ]);
    expect(new Set(DEMO_ACCOUNTS.shop.map((a) => a.username)).size).toBe(23);
  });

  it('each has saved cards in a fresh shop', () => {
    const data = seedShop();
    for (const a of DEMO_ACCOUNTS.shop)
      expect(data.savedCards[a.username]?.length, a.username).toBeGreaterThan(0);
  });

  it('are connected to tenant demo as acct_demo_shop_01..20, beside the existing accounts', () => {
    expect(LOAD_TEST_CONNECTED.map((c) => c.accountId)).toEqual(
      Array.from({ length: 20 }, (_, i) => loadTestShopAccountId(i + 1)),
    );
    expect(loadTestShopAccountId(7)).toBe('acct_demo_shop_07');
    expect(LOAD_TEST_CONNECTED.every((c) => c.application === 'shop')).toBe(true);
    expect(LOAD_TEST_CONNECTED.map((c) => c.username)).toEqual(LOAD_TEST_SHOPPERS.map((a) => a.username));
    expect(DEMO_CONNECTED.map((c) => c.accountId)).toContain('acct_demo_shop');
  });

  it('each signs in and reaches the review page with its saved Visa 4242', async () => {
    await Promise.all(
      LOAD_TEST_SHOPPERS.map(async (a) => {
        const client = new SiteClient(sites.shop.baseUrl);
        expect((await client.signIn(a.username, a.password)).location, a.username).toBe('/');
        expect((await client.post('/cart/add', { sku: 'MUG-ENAMEL-BLU', quantity: '1' })).status).toBe(303);
        const address = {
          name: a.displayName,
          line1: '1 Test Street',
          city: 'London',
          postcode: 'SW1Y 4JH',
          country: 'GB',
        };
        expect((await client.post('/checkout/address', address)).location).toBe('/checkout/shipping');
        expect((await client.post('/checkout/shipping', { method: 'standard' })).location).toBe(
          '/checkout/payment',
        );
        expect((await client.get('/checkout/payment')).body).toContain('data-last4="4242"');
        expect((await client.post('/checkout/payment', { method: 'pm_visa_4242' })).location).toBe(
          '/checkout/review',
        );
      }),
    );
  });
});
