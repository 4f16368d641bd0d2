import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { dataOf, SiteClient, toReview } from './http-client.ts';

let dataDir: string;
let sites: StartedSites | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'belay-sites-'));
});

afterAll(async () => {
  await sites?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('Sites with a data directory', () => {
  it('keep orders, baskets, sign-ins and fault flags across a restart on the same ports', async () => {
    const token = 'persist-token';
    sites = await startSites({ dataDir, adminToken: token });
    const ports = {
      shop: Number(new URL(sites.shop.baseUrl).port),
      crm: Number(new URL(sites.crm.baseUrl).port),
      billing: Number(new URL(sites.billing.baseUrl).port),
    };
    const ada = demoCredentials('shop', 'ada@example.com');
    const client = new SiteClient(sites.shop.baseUrl);
    await client.signIn(ada.username, ada.password);
    await toReview(client, { items: { 'COFFEE-BEANS': 1 }, shipping: 'standard' });
    const placed = await client.post('/orders', { idempotencyKey: 'persist:place-order' });
    await client.post('/cart/add', { sku: 'LAMP-DESK', quantity: '2' });
    await siteAdmin(sites.shop.baseUrl, token).setFaults({ changedLayout: true });
    await sites.stop();

    sites = await startSites({ dataDir, adminToken: token, ports });
    expect(sites.shop.baseUrl).toBe(client.baseUrl);
    const order = await client.get(placed.location ?? '/missing');
    expect(order.status).toBe(200);
    expect(order.body).toContain('data-qa="v2-order-confirmation"');
    const cart = await client.get('/cart');
    expect(cart.body).toMatch(/data-sku="LAMP-DESK" data-quantity="2"/);
    const again = await client.post('/orders', { idempotencyKey: 'persist:place-order' });
    expect(again.location).toBe(`${placed.location}?repeat=1`);
    expect((await siteAdmin(sites.shop.baseUrl, token).writes()).countsByKey).toEqual({
      'persist:place-order': 1,
    });
    expect(dataOf(order.body, 'order-confirmation', 'key')).toBeUndefined();
  });
});
