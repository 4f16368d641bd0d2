import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { dataOf, errorsOf, SiteClient } from './http-client.ts';

let sites: StartedSites;

beforeAll(async () => {
  sites = await startSites();
});

afterAll(async () => {
  await sites?.stop();
});

beforeEach(async () => {
  await siteAdmin(sites.crm.baseUrl, sites.adminToken).reset();
  await siteAdmin(sites.billing.baseUrl, sites.adminToken).reset();
});

const newAddress = { line1: '40 Wharf Road', line2: '', city: 'London', postcode: 'N1 7GR', country: 'GB' };

async function crmClient(): Promise<SiteClient> {
  const c = demoCredentials('crm', 'ada@example.com');
  const client = new SiteClient(sites.crm.baseUrl);
  expect((await client.signIn(c.username, c.password)).status).toBe(303);
  return client;
}

async function billingClient(): Promise<SiteClient> {
  const c = demoCredentials('billing', 'ada@example.com');
  const client = new SiteClient(sites.billing.baseUrl);
  expect((await client.signIn(c.username, c.password)).status).toBe(303);
  return client;
}

const crmForm = (
  version: string,
  key: string,
  extra: Record<string, string> = {},
): Record<string, string> => ({
  version,
  idempotencyKey: key,
  contactName: 'Jane Doe',
  email: 'jane.doe@acme.example',
  phone: '+44 20 7946 0001',
  notes: '',
  ...newAddress,
  ...extra,
});

describe('Site: crm', () => {
  it('finds a customer by email', async () => {
    const client = await crmClient();
    const reply = await client.get('/customers?q=jane.doe%40acme.example');
    expect(dataOf(reply.body, 'customer-row', 'id')).toBe('C-1001');
    expect(reply.body.match(/data-testid="customer-row"/g)).toHaveLength(1);
  });

  it('bumps the version once per idempotency key', async () => {
    const client = await crmClient();
    const first = await client.post('/customers/C-1001', crmForm('1', 'job-9:update-crm-customer'));
    expect(first.location).toBe('/customers/C-1001?saved=2');
    const again = await client.post('/customers/C-1001', crmForm('1', 'job-9:update-crm-customer'));
    expect(again.location).toBe('/customers/C-1001?saved=2&repeat=1');
    const record = await client.get('/customers/C-1001');
    expect(dataOf(record.body, 'record-version', 'version')).toBe('2');
    expect(dataOf(record.body, 'record-address', 'postcode')).toBe('N1 7GR');
    const writes = await siteAdmin(sites.crm.baseUrl, sites.adminToken).writes();
    expect(writes.countsByKey).toEqual({ 'job-9:update-crm-customer': 1 });
    expect(writes.attemptsByKey['job-9:update-crm-customer']).toBe(2);
    const audit = await client.get('/audit?key=job-9%3Aupdate-crm-customer');
    expect(dataOf(audit.body, 'audit-row', 'version')).toBe('2');
  });

  it('refuses a save from a stale form, and a key reused for another record', async () => {
    const client = await crmClient();
    await client.post('/customers/C-1001', crmForm('1', 'k1'));
    const stale = await client.post('/customers/C-1001', crmForm('1', 'k2'));
    expect(stale.status).toBe(409);
    expect(errorsOf(stale.body)[0]).toMatch(/changed by someone else \(now version 2\)/);
    const reused = await client.post('/customers/C-1002', crmForm('1', 'k1'));
    expect(reused.status).toBe(409);
  });

  it('shows validation errors and saves nothing', async () => {
    const client = await crmClient();
    const reply = await client.post(
      '/customers/C-1001',
      crmForm('1', 'k3', { contactName: '', email: 'nope', city: '' }),
    );
    expect(reply.status).toBe(400);
    expect(errorsOf(reply.body)).toEqual([
      'Enter the contact name',
      'Enter an email address in the correct format, like name@example.com',
      'Enter a town or city',
    ]);
    expect((await siteAdmin(sites.crm.baseUrl, sites.adminToken).writes()).count).toBe(0);
  });
});

describe('Site: billing', () => {
  it('changes the billing address once per key and shows it on the account page', async () => {
    const client = await billingClient();
    expect(dataOf((await client.get('/accounts?q=acme')).body, 'account-row', 'id')).toBe('BA-5001');
    const form = { idempotencyKey: 'job-9:update-billing-address', ...newAddress };
    expect((await client.post('/accounts/BA-5001/address', form)).location).toBe(
      '/accounts/BA-5001?updated=1',
    );
    expect((await client.post('/accounts/BA-5001/address', form)).location).toBe(
      '/accounts/BA-5001?updated=1&repeat=1',
    );
    const account = await client.get('/accounts/BA-5001');
    expect(dataOf(account.body, 'billing-address', 'line1')).toBe('40 Wharf Road');
    expect(dataOf(account.body, 'billing-address', 'version')).toBe('2');
    expect((await siteAdmin(sites.billing.baseUrl, sites.adminToken).writes()).countsByKey).toEqual({
      'job-9:update-billing-address': 1,
    });
    expect(
      dataOf(
        (await client.get('/activity?key=job-9%3Aupdate-billing-address')).body,
        'activity-row',
        'account-id',
      ),
    ).toBe('BA-5001');
  });

  it('refuses an address without a postcode', async () => {
    const client = await billingClient();
    const reply = await client.post('/accounts/BA-5001/address', {
      idempotencyKey: 'k',
      ...newAddress,
      postcode: '',
    });
    expect(reply.status).toBe(400);
    expect(errorsOf(reply.body)).toEqual(['Enter a postcode']);
  });
});
