import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { sessionCdpUrl } from '../../../lambdas/lib/browser/adapter.ts';
import { signLiveViewToken } from '../../../lambdas/lib/browser/live-view-token.ts';
import { verifySignature } from '../../../lambdas/lib/notifications/signing.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { PERSON, TENANT } from '../../support/fixtures.ts';
import { waitForJob } from '../../support/jobs.ts';
import { call } from '../api/support/http.ts';
import { eventually, launchBrowser, seriousViolations, signedIn } from './support.ts';

/**
 * A person takes over the live browser, through the console in real Chromium, against the real
 * local stack (real ASL in the local Step Functions runner, the handlers, DynamoDB Local, the
 * Anchor-compatible service's Chromium, the demo shop): a job's step asks for a takeover; the
 * tenant's webhook is told, signed, with the live view link; the job page shows the live view
 * (framed under that page's CSP alone) and a Done button. Done while the page is elsewhere is
 * refused with the reason and the job keeps waiting; the person clicks into the live view and
 * types, the text arrives in the session's page (read through CDP), Done resumes the job at its
 * checkpoint (no earlier step runs again) and it succeeds with what the person typed. A foreign,
 * expired or forged token is refused.
 */
const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'takeover-playbooks');
const getEngine = useEngineStack({ playbookDirs: [FIXTURES] });

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let browser: Browser;
let receiver: Server;
const received: Received[] = [];
beforeAll(async () => {
  browser = await launchBrowser();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', () => ok()));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((ok) => (receiver ? receiver.close(() => ok()) : ok()));
});

describe('Console: a person takes over the live browser', () => {
  it('shows the live view, takes the person’s typing into the session, checks the page on Done and resumes at the checkpoint', async () => {
    const engine = getEngine();
    const { stack } = engine;
    const apiUrl = stack.apiUrl as string;
    const key = stack.demoApiKey;
    const hook = await call(apiUrl, 'POST', '/notifications/webhooks', {
      key,
      body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
    });
    expect(hook.status).toBe(201);
    const secret = hook.json.secret as string;

    await submitJob(
      engine.api,
      PERSON,
      {
        jobId: 'takeover-1',
        playbook: 'shop-handoff@1',
        inputs: { customer: 'Ada' },
        accounts: { shop: 'acct_demo_shop' },
      },
      undefined,
    );
    await waitForJob(engine, 'takeover-1', ({ job }) => job.status === 'WAITING_TAKEOVER', {
      timeoutMs: 180_000,
      what: 'WAITING_TAKEOVER',
    });
    const { job: waiting, entries: before } = await stack.ledger.readJob(TENANT, 'takeover-1');
    expect(waiting.wait).toMatchObject({ kind: 'takeover', step: 'handoff', reason: 'takeover' });
    // Bounded by the session's idle timeout (30 minutes by default, less 5 minutes).
    const lasts =
      (Date.parse(waiting.wait?.expiresAt ?? '') - Date.parse(waiting.wait?.requestedAt ?? '')) / 1000;
    expect(lasts).toBe(1500);
    const request = before.findLast((e) => e.type === 'takeover-requested');
    expect(request?.detail?.question).toContain('Type the search term Ada gave');
    const sessionId = waiting.sessions.shop?.sessionId as string;

    // Only the tenant's approvers may say it is done: a submitter is refused, another tenant sees no job.
    const keys = createApiKeyStore({ doc: stack.doc, tableName: stack.tableName });
    const submitter = (await keys.create(TENANT, ['submitter'], { label: 'takeover-submitter' })).apiKey;
    const other = (await keys.create('takeover-other', ['submitter', 'approver', 'admin'])).apiKey;
    const done = { done: true };
    expect(
      (await call(apiUrl, 'POST', '/jobs/takeover-1/takeover', { key: submitter, body: done })).status,
    ).toBe(403);
    expect((await call(apiUrl, 'POST', '/jobs/takeover-1/takeover', { key: other, body: done })).status).toBe(
      404,
    );
    const bad = await call(apiUrl, 'POST', '/jobs/takeover-1/takeover', { key, body: { done: 'yes' } });
    expect(bad.status).toBe(400);
    expect((await stack.ledger.getJob(TENANT, 'takeover-1')).status).toBe('WAITING_TAKEOVER');

    // The tenant's webhook is told, signed, with the question and the decision page: no live view.
    const notice = await eventually(
      async () => received.find((r) => JSON.parse(r.body).job?.kind === 'takeover'),
      30_000,
      'the takeover notification',
    );
    expect(
      verifySignature(secret, notice.headers['belay-signature'] as string, notice.body, Date.now() / 1000),
    ).toBe(true);
    const payload = JSON.parse(notice.body);
    expect(payload.text).toContain('waits for a person to act in its browser at step handoff');
    expect(payload.links.console).toBe(`${apiUrl}/console/jobs/takeover-1`);
    expect(payload.links.liveView).toBeUndefined();
    expect(notice.body).not.toContain('/live');
    expect(notice.body).not.toContain('token=');

    // The engine's own view of the session's page, over CDP, to check what the person did.
    const cdp = await chromium.connectOverCDP(
      sessionCdpUrl(stack.anchor.baseUrl, sessionId, stack.anchor.apiKey),
    );
    try {
      const sessionPage = cdp.contexts()[0]?.pages()[0];
      if (!sessionPage) throw new Error('the session has no page');
      const search = sessionPage.locator('[data-testid="search-input"]');

      const person = await signedIn(browser, apiUrl, key);
      const { page } = person;
      const answer = await page.goto(`${apiUrl}/console/jobs/takeover-1`);
      const csp = answer?.headers()['content-security-policy'] ?? '';
      expect(csp).toContain(`frame-src ${stack.anchor.baseUrl}`);
      expect(csp).toContain("frame-ancestors 'none'");
      await expect
        .poll(() => page.locator('h3').first().textContent())
        .toBe('Take over the browser at step handoff');
      expect(await page.locator('article.question').textContent()).toContain('Type the search term Ada gave');
      const frameEl = page.locator('iframe.live-view');
      const src = (await frameEl.getAttribute('src')) as string;
      expect(src).toMatch(new RegExp(`^${stack.anchor.baseUrl}/_local/sessions/${sessionId}/live\\?token=`));
      // The sessions table's link is a watch-only view, signed as well (the local view takes no unsigned link).
      const tableLink = (await page
        .getByRole('link', { name: 'Watch shop (view only)' })
        .getAttribute('href')) as string;
      expect(new URL(tableLink).searchParams.get('token')).toBeTruthy();
      expect((await fetch(tableLink)).status).toBe(200);
      expect((await fetch(tableLink.replace(/\?.*$/, ''))).status).toBe(403);
      // Only that page frames anything: the inbox's CSP has no frame-src.
      const inbox = await person.context.request.get(`${apiUrl}/console/inbox`);
      expect(inbox.headers()['content-security-policy']).not.toContain('frame-src');
      expect(await inbox.text()).toContain('Open the job’s page');

      const view = page.frameLocator('iframe.live-view');
      await eventually(
        async () => Number(await view.locator('body').getAttribute('data-frames')) > 0,
        30_000,
        'a frame in the live view',
      );

      // Done while the page is elsewhere: refused with the reason; the job keeps waiting.
      await sessionPage.goto(`${stack.sites.shop.baseUrl}/cart`);
      await page.getByRole('button', { name: 'Done' }).click();
      await expect
        .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
        .toContain('is not where step handoff goes on from');
      expect((await stack.ledger.getJob(TENANT, 'takeover-1')).status).toBe('WAITING_TAKEOVER');
      await sessionPage.goto(`${stack.sites.shop.baseUrl}/`);
      await search.waitFor();

      // The person clicks the search box in the streamed picture and types.
      const target = await search.boundingBox();
      const viewport = await sessionPage.evaluate(() => ({ w: window.innerWidth, h: window.innerHeight }));
      await eventually(
        async () => Number(await view.locator('body').getAttribute('data-frames')) > 2,
        30_000,
        'frames of the page again',
      );
      await frameEl.scrollIntoViewIfNeeded();
      const screen = await view.locator('#screen').boundingBox();
      if (!target || !screen) throw new Error('no search box or no live view picture');
      await page.mouse.click(
        screen.x + ((target.x + target.width / 2) * screen.width) / viewport.w,
        screen.y + ((target.y + target.height / 2) * screen.height) / viewport.h,
      );
      await page.keyboard.type('mug');
      await eventually(
        async () => (await search.inputValue()) === 'mug',
        15_000,
        'the typed text in the session',
      );
      expect(await seriousViolations(page), 'job page with a takeover').toEqual([]);

      await page.getByRole('button', { name: 'Done' }).click();
      await expect
        .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
        .toContain('Done: the page is where the step goes on from');
    } finally {
      await cdp.close();
    }

    const finished = await waitForJob(engine, 'takeover-1', ({ job }) => job.status === 'SUCCEEDED', {
      timeoutMs: 120_000,
      what: 'SUCCEEDED',
    });
    expect(finished.job.status).toBe('SUCCEEDED');
    const { entries } = await stack.ledger.readJob(TENANT, 'takeover-1');
    const completed = entries.filter((e) => e.type === 'step-completed').map((e) => e.step);
    // Resumed at its checkpoint: the steps before the takeover ran once, the handoff once, after the person.
    expect(completed).toEqual(['open-shop', 'sign-in', 'handoff']);
    const at = (type: string): number => entries.findIndex((e) => e.type === type);
    expect(at('takeover-requested')).toBeLessThan(at('takeover-completed'));
    expect(entries.find((e) => e.type === 'takeover-completed')?.actor).toBeTruthy();
    expect(entries.findLast((e) => e.type === 'step-completed')?.evidence).toMatchObject({ query: 'mug' });
    expect(entries.filter((e) => e.type === 'takeover-requested')).toHaveLength(1);

    // Tokens not Belay's for this tenant and session are refused, on the page and the socket.
    const base = `${stack.anchor.baseUrl}/_local/sessions/${sessionId}/live`;
    const soon = Math.floor(Date.now() / 1000) + 600;
    const refused = [
      signLiveViewToken(stack.anchor.apiKey, {
        sessionId,
        tenantId: 'another-tenant',
        expiresAt: soon,
        interactive: true,
        issuedAt: Date.now(),
      }),
      signLiveViewToken(stack.anchor.apiKey, {
        sessionId,
        tenantId: TENANT,
        expiresAt: soon - 601,
        interactive: true,
        issuedAt: Date.now(),
      }),
      signLiveViewToken('a-guessed-key', {
        sessionId,
        tenantId: TENANT,
        expiresAt: soon,
        interactive: true,
        issuedAt: Date.now(),
      }),
    ];
    for (const token of refused) {
      expect((await fetch(`${base}?token=${encodeURIComponent(token)}`)).status).toBe(403);
    }
    // Done again once the job went on: nothing is waiting.
    const again = await call(apiUrl, 'POST', '/jobs/takeover-1/takeover', { key, body: { done: true } });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('not_waiting');
  }, 420_000);
});
