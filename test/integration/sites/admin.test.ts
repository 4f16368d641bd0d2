import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import { AdminRequestError } from '../../../demo/sites/errors.ts';
import { handleAdmin } from '../../../demo/sites/http/admin.ts';
import { latencySampler } from '../../../demo/sites/http/latency.ts';
import { initialState, SiteRuntime } from '../../../demo/sites/http/runtime.ts';
import { JsonStore } from '../../../demo/sites/http/store.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { shopSite } from '../../../demo/sites/shop/index.ts';
import { SiteClient, toReview } from './http-client.ts';

let sites: StartedSites;
let admin: SiteAdmin;

beforeAll(async () => {
  sites = await startSites({ adminToken: 'test-admin-token' });
  admin = siteAdmin(sites.shop.baseUrl, sites.adminToken);
});

afterAll(async () => {
  await sites?.stop();
});

beforeEach(async () => {
  await admin.reset();
});

const ada = demoCredentials('shop', 'ada@example.com');

describe('Site admin endpoint', () => {
  it.each([['wrong-token'], ['']])('refuses the token %j with 401 and changes nothing', async (token) => {
    const res = await fetch(`${sites.shop.baseUrl}/__admin/sessions/expire`, {
      method: 'POST',
      headers: token ? { 'x-admin-token': token } : {},
    });
    expect(res.status).toBe(401);
    await expect(siteAdmin(sites.crm.baseUrl, 'nope').writes()).rejects.toBeInstanceOf(AdminRequestError);
  });

  it('refuses a request that is not from loopback, even with the token', () => {
    const rt = new SiteRuntime(
      shopSite,
      new JsonStore(undefined, 'shop', () => initialState(shopSite)),
      'tok',
    );
    const req = {
      method: 'GET',
      path: '/__admin/writes',
      query: new URLSearchParams(),
      params: {},
      form: new URLSearchParams(),
      body: '',
      cookies: {},
      headers: { 'x-admin-token': 'tok' },
    };
    expect(handleAdmin(rt, { ...req, remoteAddress: '192.0.2.10' }).status).toBe(403);
    expect(handleAdmin(rt, { ...req, remoteAddress: '127.0.0.1' }).status).toBe(200);
  });

  it('expires every sign-in now', async () => {
    const client = new SiteClient(sites.shop.baseUrl);
    await client.signIn(ada.username, ada.password);
    expect((await client.get('/cart')).status).toBe(200);
    expect((await admin.expireSessions()).expired).toBe(1);
    expect((await client.get('/cart')).location).toBe('/signin?next=%2Fcart');
  });

  it('switches to the changed layout: same page, other selectors', async () => {
    const client = new SiteClient(sites.shop.baseUrl);
    expect((await client.get('/search?q=mug')).body).toContain('data-testid="result-link"');
    await admin.setFaults({ changedLayout: true });
    const changed = (await client.get('/search?q=mug')).body;
    expect(changed).not.toContain('data-testid=');
    expect(changed).toContain('data-qa="v2-result-link"');
    expect(changed).toContain('/products/MUG-ENAMEL-BLU');
  });

  it('commits the next write but drops its response, once', async () => {
    const client = new SiteClient(sites.shop.baseUrl);
    await client.signIn(ada.username, ada.password);
    await toReview(client, { items: { 'TEA-BREAKFAST': 1 } });
    await admin.setFaults({ dropNextWriteResponse: true });
    await expect(client.post('/orders', { idempotencyKey: 'drop-1' })).rejects.toThrow();
    expect((await admin.writes()).countsByKey).toEqual({ 'drop-1': 1 });
    expect((await admin.faults()).dropNextWriteResponse).toBe(false);
    const retry = await client.post('/orders', { idempotencyKey: 'drop-1' });
    expect(retry.location).toMatch(/\?repeat=1$/);
    expect((await admin.writes()).countsByKey).toEqual({ 'drop-1': 1 });
  });

  it.each([['reset'], ['close']] as const)(
    "drops a committed write's response with no byte at all (%s), once",
    async (dropMode) => {
      const client = new SiteClient(sites.shop.baseUrl);
      await client.signIn(ada.username, ada.password);
      await toReview(client, { items: { 'TEA-BREAKFAST': 1 } });
      await admin.setFaults({ dropNextWriteResponse: true, dropMode });
      const raw = await rawPost(
        sites.shop.baseUrl,
        '/orders',
        client.cookieHeader(),
        'idempotencyKey=drop-2',
      );
      expect(raw).toEqual({
        bytes: 0,
        error: expect.stringMatching(dropMode === 'reset' ? /ECONNRESET/ : /closed|hang up|ECONNRESET/),
      });
      expect((await admin.writes()).countsByKey).toEqual({ 'drop-2': 1 });
      expect((await admin.faults()).dropNextWriteResponse).toBe(false);
    },
  );

  it('refuses a drop mode it does not know, and a dedupe that is not a boolean, changing nothing', async () => {
    await expect(admin.setFaults({ dropMode: 'explode' as never })).rejects.toThrow(
      /dropMode must be one of/,
    );
    await expect(admin.setFaults({ dedupe: 'no' as never })).rejects.toThrow(/dedupe must be a boolean/);
    expect(await admin.faults()).toMatchObject({ dropMode: 'status-line', dedupe: true });
  });

  it('with de-duplication off, commits every write request as a new record, and keeps the mode through a reset', async () => {
    await admin.setFaults({ dedupe: false });
    try {
      const client = new SiteClient(sites.shop.baseUrl);
      await client.signIn(ada.username, ada.password);
      await toReview(client, { items: { 'TEA-BREAKFAST': 1 } });
      const first = await client.post('/orders', { idempotencyKey: 'twice' });
      const second = await client.post('/orders', { idempotencyKey: 'twice' });
      expect(first.location).toMatch(/^\/orders\/HS-\d+$/);
      expect(second.location).toMatch(/^\/orders\/HS-\d+$/);
      expect(second.location).not.toBe(first.location);
      expect((await admin.writes()).countsByKey).toEqual({ twice: 2 });
      await admin.reset();
      expect((await admin.faults()).dedupe).toBe(false);
    } finally {
      await admin.setFaults({ dedupe: true });
    }
  });

  it('slows responses down by the given delay', async () => {
    await admin.setFaults({ slowMs: 300 });
    const started = Date.now();
    await fetch(`${sites.shop.baseUrl}/`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await expect(admin.setFaults({ slowMs: -1 })).rejects.toThrow(/slowMs/);
  });

  it('delays each answer by a draw from its latency profile, and refuses a bad one naming it', async () => {
    const latency = { p50Ms: 120, p95Ms: 300 };
    await admin.setFaults({ latency });
    try {
      // The shop's draws are seeded by its name: the same sequence a new sampler gives.
      const draws = latencySampler(latency, 'shop');
      for (let i = 0; i < 5; i++) {
        const want = draws();
        const started = performance.now();
        await fetch(`${sites.shop.baseUrl}/`);
        expect(performance.now() - started).toBeGreaterThanOrEqual(want - 2);
      }
      expect((await admin.faults()).latency).toEqual(latency);
      await expect(admin.setFaults({ latency: { p50Ms: 500, p95Ms: 100 } })).rejects.toThrow(
        /latency: p95 must be at least p50/,
      );
    } finally {
      await admin.setFaults({ latency: null });
    }
    expect((await admin.faults()).latency).toBeNull();
  });

  it('makes each page send requests of its own as a form is submitted, answered later, and refuses a non-boolean', async () => {
    const page = () => fetch(`${sites.shop.baseUrl}/signin`).then((r) => r.text());
    expect(await page()).not.toContain('/__busy');
    await admin.setFaults({ busyPages: true });
    try {
      expect(await page()).toMatch(/addEventListener\('submit'.*fetch\('\/__busy\?ms='/);
      let started = performance.now();
      expect((await fetch(`${sites.shop.baseUrl}/__busy?ms=60`)).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(58);
      // A delay asked beyond 200 ms is cut to 200.
      started = performance.now();
      await fetch(`${sites.shop.baseUrl}/__busy?ms=60000`);
      expect(performance.now() - started).toBeLessThan(1_000);
      await expect(admin.setFaults({ busyPages: 'yes' as never })).rejects.toThrow(
        /busyPages must be a boolean/,
      );
      expect((await admin.faults()).busyPages).toBe(true);
    } finally {
      await admin.setFaults({ busyPages: false });
    }
    expect(await page()).not.toContain('/__busy');
  });

  it('logs requests and counts POSTs by path', async () => {
    const client = new SiteClient(sites.shop.baseUrl);
    await client.post('/signin', { username: ada.username, password: 'bad' });
    await client.post('/signin', { username: ada.username, password: ada.password });
    await client.get('/');
    await sleep(10);
    const log = await admin.requests();
    expect(log.postsByPath).toEqual({ '/signin': 2 });
    expect(log.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /signin 401',
      'POST /signin 303',
      'GET / 200',
    ]);
  });

  it('lists the one-time codes of the outbox', async () => {
    const client = new SiteClient(sites.crm.baseUrl);
    const alan = demoCredentials('crm', 'alan@example.com');
    await client.post('/signin', { username: alan.username, password: alan.password });
    const messages = await siteAdmin(sites.crm.baseUrl, sites.adminToken).outbox();
    expect(messages).toHaveLength(1);
    expect(messages[0]?.to).toBe('+44 7700 900123');
    expect(messages[0]?.text).toContain(messages[0]?.code ?? 'missing');
  });
});

/** POSTs a form over a raw connection and reports what came back: bytes of response, or the error that ended it. */
function rawPost(
  baseUrl: string,
  path: string,
  cookie: string,
  body: string,
): Promise<{ bytes: number; error?: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((done) => {
    let bytes = 0;
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    socket.on('data', (chunk) => {
      bytes += chunk.length;
    });
    socket.on('error', (err) => done({ bytes, error: String(err) }));
    socket.on('close', () => done({ bytes, error: 'closed' }));
    socket.setTimeout(5_000, () => socket.destroy(new Error('timed out')));
  });
}
