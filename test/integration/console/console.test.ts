import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS } from '../../../demo/accounts.ts';
import { createApiKeyStore } from '../../../lambdas/lib/auth/api-keys.ts';
import { CONNECT_PAGE_PATH } from '../../../local/anchor/connect-page.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_INPUTS, TENANT } from '../../support/fixtures.ts';
import { submitCheckout, waitForJob } from '../../support/jobs.ts';
import { call } from '../api/support/http.ts';
import { eventually, launchBrowser, seriousViolations, signedIn } from './support.ts';

/**
 * The console in real Chromium against the real local stack (real ASL and handlers, DynamoDB
 * Local, the browser service, the demo shop, the S3-compatible screenshot store): a person
 * signs in with an API key, sees an approval with the page's screenshot and approves it, enters
 * an MFA code, answers a review of a changed page; a submitter cannot approve; hostile ledger
 * text renders as text; another tenant sees nothing; the main pages pass axe's serious checks.
 * An admin connects an account from the Accounts page through the local Anchor service's hosted
 * sign-in and finds it listed; a submitter is refused the page and the connection, as in the API.
 */
const getEngine = useEngineStack();
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const HOSTILE = '"><img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';

describe('Console', () => {
  it('approves, takes an MFA code and answers a review in place; roles, escaping, tenancy and accessibility hold', async () => {
    const engine = getEngine();
    const { stack } = engine;
    const apiUrl = stack.apiUrl as string;
    const keys = createApiKeyStore({ doc: stack.doc, tableName: stack.tableName });
    const submitter = (await keys.create(TENANT, ['submitter'], { label: 'console-submitter' })).apiKey;
    const other = (await keys.create('console-other', ['submitter', 'approver', 'admin'])).apiKey;

    // A: the plain account, with a hostile name in its inputs; B: the account whose sign-in texts a code.
    await submitCheckout(engine, {
      jobId: 'console-a',
      inputs: {
        ...CHECKOUT_INPUTS,
        shippingAddress: { ...CHECKOUT_INPUTS.shippingAddress, name: `Ada ${HOSTILE}`.slice(0, 100) },
      },
    });
    await submitCheckout(engine, { jobId: 'console-b', account: 'acct_demo_shop_sms' });
    // C: a job whose ledger holds hostile evidence, detail and actor.
    await stack.ledger.createJob(
      TENANT,
      'console-xss',
      {
        playbook: 'checkout@1',
        inputs: { search: HOSTILE },
        accounts: { shop: 'acct_demo_shop' },
        approvals: [],
        retryBudget: 1,
      },
      14,
    );
    await stack.ledger.append(TENANT, 'console-xss', {
      type: 'reconciled',
      step: 'place-order',
      actor: HOSTILE,
      evidence: { note: '<script>window.__xss=3</script>', quote: HOSTILE },
      detail: { reason: HOSTILE, nested: { html: '<b onmouseover="window.__xss=4">x</b>' } },
    });

    const person = await signedIn(browser, apiUrl, stack.demoApiKey);
    const { page } = person;
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    // The key never stays in the browser: the session is an httpOnly cookie for /console only.
    const cookies = await person.context.cookies(`${apiUrl}/console`);
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([
      ['belay_console', true, 'Strict', '/console'],
    ]);
    expect(
      await page.evaluate(
        () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
      ),
    ).not.toContain('blk_');

    // B asks for a one-time code: enter it in the inbox.
    await waitForJob(engine, 'console-b', ({ job }) => job.status === 'WAITING_MFA', {
      timeoutMs: 240_000,
      what: 'WAITING_MFA',
    });
    await page.goto(`${apiUrl}/console/inbox`);
    const code = await engine.shop.latestCode('alan@example.com');
    expect(code).toMatch(/^\d{6}$/);
    await page.getByLabel('One-time code for job console-b').fill(code as string);
    await page.getByRole('button', { name: 'Send code' }).click();
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
      .toContain('Code sent');

    // A waits for approval: the inbox shows what the step will do, the inputs (as text) and the page.
    await waitForJob(engine, 'console-a', ({ job }) => job.status === 'WAITING_APPROVAL', {
      timeoutMs: 240_000,
      what: 'WAITING_APPROVAL',
    });
    await page.goto(`${apiUrl}/console/inbox`);
    const card = page.locator('article.question', { has: page.locator('a', { hasText: 'console-a' }) });
    await expect.poll(() => card.count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(() => card.locator('h3').textContent()).toBe('Approve step place-order?');
    expect(await card.textContent()).toContain('<img src=x onerror=');
    expect(await card.locator('img[onerror], script').count()).toBe(0);
    const shot = card.locator('figure.shot img');
    await expect
      .poll(() => shot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), {
        timeout: 20_000,
      })
      .toBeGreaterThan(100);
    const src = (await shot.getAttribute('src')) as string;

    // The stored screenshot is the one the ledger recorded (size and sha256).
    const served = await person.context.request.get(`${apiUrl}${src}`);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('image/jpeg');
    const bytes = await served.body();
    const { entries: before } = await stack.ledger.readJob(TENANT, 'console-a');
    const recorded = before.findLast((e) => e.screenshot)?.screenshot;
    expect(recorded).toMatchObject({
      reason: 'before-approval',
      bytes: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });

    // Accessibility of the main pages, with real content on them.
    expect(await seriousViolations(page), 'inbox').toEqual([]);
    await page.goto(`${apiUrl}/console/jobs`);
    expect(await seriousViolations(page), 'jobs').toEqual([]);
    await page.goto(`${apiUrl}/console/jobs/console-a`);
    expect(await seriousViolations(page), 'job').toEqual([]);

    // A submitter sees the question but no approve button, and the console's API refuses (403), as does the bearer API.
    const sub = await signedIn(browser, apiUrl, submitter);
    await sub.page.goto(`${apiUrl}/console/inbox`);
    const subCard = sub.page.locator('article.question', {
      has: sub.page.locator('a', { hasText: 'console-a' }),
    });
    await expect.poll(() => subCard.count()).toBe(1);
    expect(await subCard.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await subCard.textContent()).toContain('needs the approver role');
    const csrf = await sub.page.locator('meta[name="belay-csrf"]').getAttribute('content');
    const refused = await sub.context.request.post(`${apiUrl}/console/api/jobs/console-a/decisions`, {
      headers: { 'X-Belay-CSRF': csrf as string },
      data: { step: 'place-order', decision: 'approve' },
    });
    expect(refused.status()).toBe(403);
    expect(
      (
        await call(apiUrl, 'POST', '/jobs/console-a/decisions', {
          key: submitter,
          body: { step: 'place-order', decision: 'approve' },
        })
      ).status,
    ).toBe(403);
    // Without the page's CSRF token even an approver's session is refused.
    const noCsrf = await person.context.request.post(`${apiUrl}/console/api/jobs/console-a/decisions`, {
      data: { step: 'place-order', decision: 'approve' },
    });
    expect(noCsrf.status()).toBe(403);
    expect((await stack.ledger.getJob(TENANT, 'console-a')).status).toBe('WAITING_APPROVAL');

    // Another tenant: the job page and its screenshot are 404, in the console and in the API.
    const stranger = await signedIn(browser, apiUrl, other);
    expect((await stranger.page.goto(`${apiUrl}/console/jobs/console-a`))?.status()).toBe(404);
    expect((await stranger.context.request.get(`${apiUrl}${src}`)).status()).toBe(404);
    const apiShot = src.replace('/console', '');
    expect((await call(apiUrl, 'GET', apiShot, { key: other })).status).toBe(404);
    expect((await call(apiUrl, 'GET', apiShot, { key: stack.demoApiKey })).status).toBe(200);
    expect(
      await stranger.page.goto(`${apiUrl}/console/inbox`).then(() => stranger.page.textContent('main')),
    ).toContain('Nothing waits for you');

    // Approve A in place, with a comment: the job finishes and the timeline shows who decided, when and why.
    await page.goto(`${apiUrl}/console/inbox`);
    await card
      .getByLabel('Comment (kept in the ledger with your decision)')
      .fill('Order checked <b>by hand</b>');
    await card.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.locator('#status').textContent(), { timeout: 30_000 })
      .toContain('Decision recorded');
    await waitForJob(engine, 'console-a', ({ job }) => job.status === 'SUCCEEDED', {
      timeoutMs: 180_000,
      what: 'SUCCEEDED',
    });
    await page.goto(`${apiUrl}/console/jobs/console-a`);
    const decision = page.locator('li.entry-approval-recorded .decision');
    await expect.poll(() => decision.textContent()).toContain('approve by');
    const keyId = stack.demoApiKey.slice(0, 16);
    expect(await decision.textContent()).toContain(keyId);
    expect(await decision.textContent()).toContain('Order checked <b>by hand</b>');
    expect(await page.locator('.status').first().textContent()).toBe('SUCCEEDED');
    expect(await page.locator('li.entry-step-completed figure.shot').count()).toBeGreaterThanOrEqual(2);

    // B: its approval comes after the code; the shop's layout changes before it is approved, so B asks for a review.
    await waitForJob(engine, 'console-b', ({ job }) => job.status === 'WAITING_APPROVAL', {
      timeoutMs: 240_000,
      what: 'B WAITING_APPROVAL',
    });
    await engine.shop.setFaults({ changedLayout: true });
    try {
      await page.goto(`${apiUrl}/console/inbox`);
      const bCard = page.locator('article.question', { has: page.locator('a', { hasText: 'console-b' }) });
      await eventually(async () => (await bCard.count()) === 1, 20_000, 'B in the inbox');
      await bCard.getByRole('button', { name: 'Approve' }).click();
      await waitForJob(engine, 'console-b', ({ job }) => job.status === 'WAITING_REVIEW', {
        timeoutMs: 120_000,
        what: 'WAITING_REVIEW',
      });
      await page.goto(`${apiUrl}/console/inbox`);
      const review = page.locator('article.question', { has: page.locator('a', { hasText: 'console-b' }) });
      await expect
        .poll(() => review.locator('h3').textContent(), { timeout: 20_000 })
        .toBe('The page of step place-order has changed');
      await expect
        .poll(
          () =>
            review
              .locator('figure.shot img')
              .evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth),
          { timeout: 20_000 },
        )
        .toBeGreaterThan(100);
      expect(await review.locator('figcaption').textContent()).toContain('before review');
      await engine.shop.setFaults({ changedLayout: false });
      await review.getByLabel('Comment (kept in the ledger with your decision)').fill('layout fixed');
      await review.getByRole('button', { name: 'Approve' }).click();
    } finally {
      await engine.shop.setFaults({ changedLayout: false });
    }
    await waitForJob(engine, 'console-b', ({ job }) => job.status === 'SUCCEEDED', {
      timeoutMs: 180_000,
      what: 'B SUCCEEDED',
    });
    const { entries: bEntries } = await stack.ledger.readJob(TENANT, 'console-b');
    expect(bEntries.find((e) => e.type === 'review-recorded')?.detail).toMatchObject({
      decision: 'approve',
      comment: 'layout fixed',
    });

    // Hostile ledger text is text: no script ran, no element came from it.
    await page.goto(`${apiUrl}/console/jobs/console-xss`);
    const main = page.locator('main');
    expect(await main.textContent()).toContain('<script>window.__xss=3</script>');
    expect(await main.textContent()).toContain('<b onmouseover=');
    expect(await page.locator('main script, main img[onerror], main b[onmouseover]').count()).toBe(0);
    await page.goto(`${apiUrl}/console/jobs/console-a`);
    await page.goto(`${apiUrl}/console/jobs`);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);

    // Signing out ends the session: the cookie no longer opens a page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/sign-in$/);
    await page.goto(`${apiUrl}/console/jobs`);
    expect(page.url()).toMatch(/sign-in$/);
    expect(await seriousViolations(page), 'sign-in').toEqual([]);
    for (const c of [person, sub, stranger]) await c.context.close();
  }, 900_000);

  it('connects an account from the Accounts page through the hosted sign-in and lists it; a submitter is refused', {
    timeout: 120_000,
  }, async () => {
    const { stack } = getEngine();
    const apiUrl = stack.apiUrl as string;
    const hostedPage = `${stack.anchor.baseUrl}${CONNECT_PAGE_PATH}`;
    const shopper = DEMO_ACCOUNTS.shop.find((a) => a.username === 'shopper19@example.com');
    if (!shopper) throw new Error('demo shopper19 is missing');
    const keys = createApiKeyStore({ doc: stack.doc, tableName: stack.tableName });
    const submitter = (await keys.create(TENANT, ['submitter'], { label: 'console-accounts-submitter' }))
      .apiKey;
    const other = (await keys.create('console-accounts-other', ['admin'])).apiKey;
    const label = 'Shop <b>(19)</b>';

    // The demo key is an admin's: the Accounts page has the form.
    const admin = await signedIn(browser, apiUrl, stack.demoApiKey);
    const { page } = admin;
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.waitForURL(/\/console\/accounts$/);
    expect(await seriousViolations(page), 'accounts').toEqual([]);
    await page.getByLabel('Application').selectOption('shop');
    await page.getByLabel(/^Label/).fill(label);
    await page.getByRole('button', { name: 'Continue to the sign-in' }).click();

    // The local Anchor service's hosted page: the person signs in there, and is sent back to the callback.
    await page.waitForURL((url) => url.href.startsWith(`${hostedPage}?token=`));
    await page.getByLabel('Username').fill(shopper.username);
    await page.getByLabel('Password').fill(shopper.password);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/accounts/connect/callback/'));
    expect(await page.locator('h1').textContent()).toBe('Account connected');
    await page.getByRole('link', { name: 'see the accounts in the console' }).click();
    await page.waitForURL(/\/console\/accounts$/);

    const row = page.locator('tbody tr', { hasText: label });
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').allTextContents()).toEqual([
      label,
      expect.stringMatching(/^acct_[0-9a-f]{16}$/),
      'shop',
      'Anchor identity',
      'connected',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/),
    ]);
    expect(await page.locator('main b').count()).toBe(0);
    const accountId = (await row.locator('code').textContent()) as string;
    const listed = await call(apiUrl, 'GET', '/accounts', { key: stack.demoApiKey });
    expect(listed.json.accounts).toContainEqual(
      expect.objectContaining({ accountId, label, application: 'shop', connectedWith: 'identity' }),
    );
    expect(await page.content()).not.toContain(shopper.password);

    // Without the script the form is posted as it is: its 303 goes on to the hosted page (the page's CSP lets it).
    const plain = await signedIn(browser, apiUrl, stack.demoApiKey, { javaScriptEnabled: false });
    await plain.page.goto(`${apiUrl}/console/accounts`);
    await plain.page.getByLabel('Application').selectOption('shop');
    await plain.page.getByLabel(/^Label/).fill('Shop (plain form)');
    await plain.page.getByRole('button', { name: 'Continue to the sign-in' }).click();
    await plain.page.waitForURL((url) => url.href.startsWith(`${hostedPage}?token=`));
    expect(await plain.page.locator('h1').textContent()).toBe('Connect your belay-shop account');

    // A submitter is refused the page (403, no account listed) and its post, as the API refuses GET and POST.
    const sub = await signedIn(browser, apiUrl, submitter);
    const subPage = await sub.page.goto(`${apiUrl}/console/accounts`);
    expect(subPage?.status()).toBe(403);
    expect(await sub.page.locator('tbody tr', { hasText: label }).count()).toBe(0);
    expect(await sub.page.locator('form[action="/console/api/accounts/connect"]').count()).toBe(0);
    expect(await sub.page.locator('main').textContent()).toContain('admin');
    expect(await sub.page.getByRole('link', { name: 'Accounts' }).count()).toBe(0);
    const csrf = (await sub.page.locator('meta[name="belay-csrf"]').getAttribute('content')) as string;
    const refused = await sub.context.request.post(`${apiUrl}/console/api/accounts/connect`, {
      headers: { 'X-Belay-CSRF': csrf },
      data: { application: 'shop', label: 'not allowed' },
    });
    expect(refused.status()).toBe(403);
    expect(
      (
        await call(apiUrl, 'POST', '/accounts/connect', {
          key: submitter,
          body: { application: 'shop', label: 'x' },
        })
      ).status,
    ).toBe(403);

    // Another tenant's Accounts page does not list it.
    const stranger = await signedIn(browser, apiUrl, other);
    await stranger.page.goto(`${apiUrl}/console/accounts`);
    expect(await stranger.page.locator('main').textContent()).toContain('No accounts yet.');
    for (const c of [admin, plain, sub, stranger]) await c.context.close();
  });
});
