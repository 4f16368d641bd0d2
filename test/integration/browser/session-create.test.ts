/**
 * Creating a session is never retried by the SDK: POST /v1/sessions takes no idempotency key,
 * so a retry after a lost response starts a second browser. A loopback server in Anchor's
 * shape that fails the create (as Anchor does when it started the browser and then failed).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserAdapter } from '../../../lambdas/lib/browser/adapter.ts';

describe('Function: createBrowserAdapter (session create)', () => {
  let server: Server;
  let creates = 0;
  let baseUrl = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/v1/sessions') creates++;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 500, message: 'Failed to start browser session' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends one POST /v1/sessions on a 500', async () => {
    const browser = createBrowserAdapter({ apiKey: 'k', baseUrl, maxRetries: 2 });
    await expect(
      browser.openSession({ idleTimeoutMinutes: 1, maxDurationMinutes: 1, tags: { jobId: 'j' } }),
    ).rejects.toThrow();
    expect(creates).toBe(1);
  });
});
