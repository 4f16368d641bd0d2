/**
 * Nothing secret anywhere: a full checkout with the shop account whose one-time codes go to
 * a phone (the outbox), connected through `POST /accounts` with its password, signed in
 * by a person's code through `POST /jobs/{id}/mfa`, approved and finished. Then every
 * DynamoDB item, every line the stack and its workers printed (at debug level) and every
 * API response is searched for the password, the one-time codes and the card number.
 */

import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDemoAccount } from '../../../demo/accounts.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import { createFileSecretStore } from '../../../lambdas/lib/accounts/file-secret-store.ts';
import { idempotencyKeyOf } from '../../../lambdas/lib/engine/job-identity.ts';
import { redact, redactText, registerSecret } from '../../../lambdas/lib/redact.ts';
import { createDocumentClient } from '../../../local/dynamodb.ts';
import { CHECKOUT_INPUTS, sleep } from '../../support/fixtures.ts';
import { type CallResult, call } from '../api/support/http.ts';
import { type CapturedStack, startCapturedStack } from './child-stack.ts';

const ALAN = findDemoAccount('shop', 'alan@example.com');
if (!ALAN) throw new Error('the demo shop has no alan@example.com');
/** The demo shop's test card, in the forms people write it. */
const CARD = ['4242424242424242', '4242 4242 4242 4242', '4242-4242-4242-4242'];

let stack: CapturedStack | undefined;
beforeAll(async () => {
  stack = await startCapturedStack({ LOG_LEVEL: 'debug', BELAY_PARK_AFTER_SECONDS: '900' });
}, 240_000);
afterAll(async () => {
  await stack?.stop();
}, 120_000);

/** Occurrences of any of `needles` in `haystack`, with a little context each. */
function findings(needles: readonly string[], haystack: string, where: string): string[] {
  const out: string[] = [];
  for (const needle of needles) {
    let i = haystack.indexOf(needle);
    while (i >= 0 && out.length < 20) {
      out.push(`${where}: …${haystack.slice(Math.max(0, i - 80), i + needle.length + 40)}…`);
      i = haystack.indexOf(needle, i + 1);
    }
  }
  return out;
}

describe('Security: no password, one-time code or card number anywhere', () => {
  it('keeps them out of DynamoDB, logs and API responses through a full MFA checkout', {
    timeout: 600_000,
  }, async () => {
    const s = stack as CapturedStack;
    const { apiUrl, demoApiKey: key } = s.info;
    const responses: { what: string; res: CallResult }[] = [];
    const http = async (method: string, path: string, body?: unknown): Promise<CallResult> => {
      const res = await call(apiUrl, method, path, { key, ...(body === undefined ? {} : { body }) });
      responses.push({ what: `${method} ${path} -> ${res.status}`, res });
      return res;
    };

    // Connect the account with its password (over the API: into the secret store).
    const connected = await http('POST', '/accounts', {
      application: 'shop',
      label: 'Shop (Alan, SMS code)',
      credentials: { username: ALAN.username, password: ALAN.password },
    });
    expect(connected.status).toBe(201);
    const accountId = connected.json.account.accountId as string;

    // A card number handed in as input is refused (the playbook takes saved cards only).
    const withCard = await http('POST', '/jobs', {
      jobId: 'sec-card',
      playbook: 'checkout@1',
      inputs: { ...CHECKOUT_INPUTS, payment: { cardNumber: CARD[1], savedCardLast4: '4242' } },
      accounts: { shop: accountId },
    });
    expect(withCard.status).toBe(422);
    expect((await http('GET', '/jobs/sec-card')).status).toBe(404);

    const jobId = 'sec-mfa-checkout';
    expect(
      (
        await http('POST', '/jobs', {
          jobId,
          playbook: 'checkout@1',
          inputs: CHECKOUT_INPUTS,
          accounts: { shop: accountId },
        })
      ).status,
    ).toBe(202);

    // Drive it as people would: the code from the phone (the shop's outbox), then the approval.
    const shop = siteAdmin(s.info.shopUrl, s.info.adminToken);
    const codesSent: string[] = [];
    const deadline = Date.now() + 480_000;
    let createdAt = '';
    for (;;) {
      const view = await http('GET', `/jobs/${jobId}`);
      const job = view.json.job;
      createdAt = job.createdAt;
      if (job.status === 'SUCCEEDED') break;
      if (job.status === 'FAILED' || job.status === 'CANCELLED' || Date.now() > deadline) {
        const ledger = await http('GET', `/jobs/${jobId}/ledger`);
        throw new Error(`job ${job.status}: ${ledger.text.slice(-3000)}`);
      }
      if (job.wait?.kind === 'mfa') {
        const code = await shop.latestCode(ALAN.username);
        if (code && !codesSent.includes(code)) {
          codesSent.push(code);
          expect((await http('POST', `/jobs/${jobId}/mfa`, { code })).status).toBe(200);
        }
      } else if (job.wait?.kind === 'approval') {
        expect(
          (await http('POST', `/jobs/${jobId}/decisions`, { step: job.wait.step, decision: 'approve' }))
            .status,
        ).toBe(200);
      }
      await sleep(500);
    }
    expect(codesSent.length).toBeGreaterThanOrEqual(1);
    const allCodes = (await shop.outbox()).filter((m) => m.username === ALAN.username).map((m) => m.code);
    expect(allCodes).toEqual(expect.arrayContaining(codesSent));
    const orderKey = idempotencyKeyOf({ tenantId: 'demo', jobId, createdAt }, 'place-order');
    expect((await shop.writes()).countsByKey[orderKey]).toBe(1);

    // What a user reads afterwards.
    await http('GET', `/jobs/${jobId}/ledger`);
    await http('GET', '/jobs');
    await http('GET', '/accounts');
    await http('GET', `/accounts/${accountId}`);
    await http('GET', '/reports/cost');

    // The secrets did pass through: the password is in the (encrypted) secret store.
    const store = await createFileSecretStore(`${s.dataDir}/secrets`);
    expect((await store.getCredentials('demo', accountId)).password).toBe(ALAN.password);
    const secrets = [ALAN.password, ...allCodes, ...CARD];

    // Every DynamoDB item.
    const doc = createDocumentClient(s.info.env.DYNAMODB_ENDPOINT as string);
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new ScanCommand({ TableName: s.info.env.TABLE_NAME, ExclusiveStartKey: startKey }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    doc.destroy();
    expect(items.some((i) => i.jobId === jobId && i.type === 'mfa-completed')).toBe(true);

    // Every line the stack and its workers printed; the workers' own lines are there.
    await sleep(1000);
    const lines = s.lines();
    expect(lines.some((l) => l.includes('"event":"job-waiting"') && l.includes(jobId))).toBe(true);
    // Powertools' Logger writes the level in capitals.
    expect(lines.some((l) => /"level":"(DEBUG|INFO)"/.test(l))).toBe(true);

    const found = [
      ...findings(secrets, JSON.stringify(items), 'DynamoDB'),
      ...findings(secrets, lines.join('\n'), 'logs'),
      ...responses.flatMap((r) => findings(secrets, r.res.text, r.what)),
    ];
    expect(found).toEqual([]);
    // The scan itself finds what is there (a scan that cannot fail proves nothing).
    expect(findings(secrets, `x ${ALAN.password} y`, 'probe')).toHaveLength(1);
  });
});

describe('Function: redaction of free text', () => {
  it('masks card numbers in any grouping, API keys, bearer tokens and registered secrets', () => {
    registerSecret('t-free-text', 'correct-horse-battery');
    registerSecret('t-free-text', 'abc'); // too short to mask safely: ignored
    const text = redactText(
      `card 4242 4242 4242 4242 or 4242-4242-4242-4242, key blk_0123456789abcdefXYZ, Bearer abc.def.ghi123, pw correct-horse-battery, abc`,
    );
    expect(text).toBe(
      'card [card ****4242] or [card ****4242], key [redacted], Bearer [redacted], pw [redacted], abc',
    );
    expect(
      redact({
        password: 'x',
        otp: '123456',
        code: '654321',
        nested: { cardNumber: '1', apiKey: 'k' },
        ok: 'fine',
      }),
    ).toEqual({
      password: '[redacted]',
      otp: '[redacted]',
      code: '[redacted]',
      nested: { cardNumber: '[redacted]', apiKey: '[redacted]' },
      ok: 'fine',
    });
  });
});
