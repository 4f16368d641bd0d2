/**
 * Connected accounts on the real local stack: the accounts API (credentials into the
 * secret store only), tenancy at every entry point (API routes, job submission, the engine
 * itself), and revocation of an account under a running job.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, it } from 'vitest';
import { DEMO_ACCOUNTS } from '../../../demo/accounts.ts';
import type { FaultPointEvent } from '../../../local/lambda/events.ts';
import { CHECKOUT_INPUTS } from '../../support/fixtures.ts';
import { diagnose, waitForJob } from '../../support/jobs.ts';
import { keyOf, ofType, runStepPoints } from '../../support/records.ts';
import { call } from '../api/support/http.ts';
import {
  anchorIdentity,
  api,
  connectShopAccount,
  leaseHolders,
  runningSessions,
  submitCheckoutApi,
  tenantKey,
  useApiStack,
  waitForStatus,
} from './support.ts';

const stack = useApiStack();
const RIVAL = 'rival';
const SHOPPER = DEMO_ACCOUNTS.shop.find((a) => a.username === 'shopper17@example.com');
if (!SHOPPER) throw new Error('demo shopper17 is missing');

describe.concurrent('Accounts on the real stack', () => {
  it('stops the job at its next step: FAILED account-revoked, session ended, lease released, credentials gone, no order', {
    timeout: 300_000,
  }, async ({ expect }) => {
    const s = stack();
    const accountId = await connectShopAccount(s, s.demoKey, 'shopper16@example.com');
    const jobId = 'revoke-mid-job';
    const REVOKE_AT = 3; // add-item-a
    let revokedAt = 0;
    let revoking: Promise<unknown> | undefined;
    const listener = (e: FaultPointEvent): void => {
      if (e.info.jobId !== jobId || e.info.stepIndex !== REVOKE_AT || e.point !== 'before-action') return;
      s.stack.lambdas.events.off('fault-point', listener);
      revoking = api(s, 'DELETE', `/accounts/${accountId}`, s.demoKey).then((res) => {
        revokedAt = Date.now();
        return res;
      });
    };
    s.stack.lambdas.events.on('fault-point', listener);
    await submitCheckoutApi(s, s.demoKey, jobId, accountId);

    const { job, entries } = await waitForJob(s, jobId, ({ job: j }) => j.status === 'FAILED', {
      timeoutMs: 240_000,
      what: 'FAILED after the revocation',
    }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\n${await diagnose(s, jobId)}`);
    });
    const deleted = (await revoking) as {
      status: number;
      json: { account: { status: string; revokedAt: string } };
    };
    expect(deleted.status).toBe(200);
    expect(deleted.json.account.status).toBe('revoked');
    expect(job.failure?.reason).toBe('account-revoked');

    // At most the step in flight when the account was revoked completed; nothing started after.
    const completedAfter = ofType(entries, 'step-completed').filter((c) => Date.parse(c.at) > revokedAt);
    expect(completedAfter.length).toBeLessThanOrEqual(1);
    expect(runStepPoints(s, jobId, 'before-action').filter((p) => p.at > revokedAt)).toEqual([]);
    expect(ofType(entries, 'step-started')).toEqual([]); // the write (place-order) never began
    expect(Math.max(...ofType(entries, 'step-completed').map((c) => c.stepIndex ?? 0))).toBeLessThanOrEqual(
      REVOKE_AT + 1,
    );
    expect((await s.shop.writes()).countsByKey[await keyOf(s, jobId, 'place-order')] ?? 0).toBe(0);

    // Session ended, lease released, credentials deleted.
    await expect
      .poll(() => runningSessions(s).filter((r) => r.jobId === jobId), { timeout: 15_000 })
      .toEqual([]);
    await expect.poll(() => leaseHolders(s, 'demo'), { timeout: 15_000 }).not.toContain(jobId);
    await expect(s.stack.secrets.getCredentials('demo', accountId)).rejects.toThrow(/no credentials/);

    // A second DELETE is answered the same, and changes nothing.
    const again = await api(s, 'DELETE', `/accounts/${accountId}`, s.demoKey);
    expect(again.status).toBe(200);
    expect(again.json.account.revokedAt).toBe(deleted.json.account.revokedAt);
    // A new job cannot name the revoked account.
    const refused = await api(s, 'POST', '/jobs', s.demoKey, {
      jobId: 'after-revoke',
      playbook: 'checkout@1',
      inputs: CHECKOUT_INPUTS,
      accounts: { shop: accountId },
    });
    expect(refused.status).toBe(422);
  });

  it('fails at once a job that waits for a person when its account is revoked: no order, session ended, lease released', {
    timeout: 300_000,
  }, async ({ expect }) => {
    const s = stack();
    const accountId = await connectShopAccount(s, s.demoKey, 'shopper14@example.com');
    const jobId = 'revoke-while-waiting';
    await submitCheckoutApi(s, s.demoKey, jobId, accountId);
    const waiting = await waitForStatus(s, 'demo', jobId, 'WAITING_APPROVAL', 240_000);
    expect(waiting.wait?.step).toBe('place-order');

    const deleted = await api(s, 'DELETE', `/accounts/${accountId}`, s.demoKey);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ account: { status: 'revoked' }, jobsStopped: 1 });
    // No step runs for it: the wait is failed, not left for the person to answer.
    const { job, entries } = await waitForJob(s, jobId, ({ job: j }) => j.status === 'FAILED', {
      timeoutMs: 30_000,
      what: 'FAILED right after the revocation',
    });
    expect(job.failure?.reason).toBe('account-revoked');
    expect(job.wait).toBeUndefined();
    expect(ofType(entries, 'step-started')).toEqual([]);
    expect(ofType(entries, 'approval-recorded')).toEqual([]);
    expect((await s.shop.writes()).countsByKey[await keyOf(s, jobId, 'place-order')] ?? 0).toBe(0);
    await expect
      .poll(() => runningSessions(s).filter((r) => r.jobId === jobId), { timeout: 15_000 })
      .toEqual([]);
    await expect.poll(() => leaseHolders(s, 'demo'), { timeout: 15_000 }).not.toContain(jobId);

    // An approval that comes too late is refused, and the job stays FAILED.
    const late = await api(s, 'POST', `/jobs/${jobId}/decisions`, s.demoKey, {
      step: 'place-order',
      decision: 'approve',
    });
    expect(late.status).toBe(409);
    expect((await s.ledger.getJob('demo', jobId)).status).toBe('FAILED');
    // Revoking again finds nothing more to stop.
    expect((await api(s, 'DELETE', `/accounts/${accountId}`, s.demoKey)).json.jobsStopped).toBe(0);
  });

  it('connects an account: 201, credentials in the secret store only, its own profile, listed', async ({
    expect,
  }) => {
    const s = stack();
    const res = await api(s, 'POST', '/accounts', s.demoKey, {
      application: 'shop',
      label: 'Shop (Shopper 17)',
      credentials: { username: SHOPPER.username, password: SHOPPER.password },
    });
    expect(res.status).toBe(201);
    const account = res.json.account;
    expect(account).toMatchObject({
      application: 'shop',
      label: 'Shop (Shopper 17)',
      status: 'connected',
      connectedWith: 'credentials',
      profile: `demo--shop--${account.accountId}`,
    });
    expect(account.domains).toEqual([new URL(s.stack.sites.shop.baseUrl).hostname]);
    expect(res.headers.get('location')).toBe(`/accounts/${account.accountId}`);
    expect(res.text).not.toContain(SHOPPER.password);

    // The mapping is in DynamoDB without the credentials; they are in the secret store.
    const item = await s.stack.doc.send(
      new GetCommand({
        TableName: s.stack.tableName,
        Key: { pk: 'T#demo', sk: `ACCOUNT#${account.accountId}` },
      }),
    );
    expect(item.Item?.application).toBe('shop');
    expect(JSON.stringify(item.Item)).not.toContain(SHOPPER.password);
    expect(JSON.stringify(item.Item)).not.toContain(SHOPPER.username);
    expect(await s.stack.secrets.getCredentials('demo', account.accountId)).toEqual({
      username: SHOPPER.username,
      password: SHOPPER.password,
    });

    const one = await api(s, 'GET', `/accounts/${account.accountId}`, s.demoKey);
    expect(one.status).toBe(200);
    expect(one.json.account).toEqual(account);
    const list = await api(s, 'GET', '/accounts', s.demoKey);
    expect(list.status).toBe(200);
    const ids = list.json.accounts.map((a: { accountId: string }) => a.accountId);
    expect(ids).toContain(account.accountId);
    expect(ids).toContain('acct_demo_shop');
    expect(list.text).not.toContain(SHOPPER.password);
  });

  it('connects an Anchor identity instead of credentials, once Anchor knows it for the application', async ({
    expect,
  }) => {
    const s = stack();
    const identity = await anchorIdentity(s, 'crm');
    const res = await api(s, 'POST', '/accounts', s.demoKey, {
      application: 'crm',
      label: 'CRM via Anchor identity',
      anchorIdentityId: identity,
    });
    expect(res.status).toBe(201);
    expect(res.json.account).toMatchObject({ connectedWith: 'identity', identityId: identity });
  });

  it("refuses another tenant's Anchor identity with 409, naming no tenant", async ({ expect }) => {
    const s = stack();
    const identity = await anchorIdentity(s, 'crm');
    const body = { application: 'crm', label: 'CRM', anchorIdentityId: identity };
    expect((await api(s, 'POST', '/accounts', s.demoKey, body)).status).toBe(201);
    const rival = await tenantKey(s, `${RIVAL}-identity`);
    const refused = await api(s, 'POST', '/accounts', rival, body);
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('identity_unavailable');
    expect(refused.text).not.toContain('demo');
    expect((await api(s, 'GET', '/accounts', rival)).json.accounts).toEqual([]);
  });

  it('refuses an identity Anchor tags for another tenant (409) and one Anchor does not know (422), writing nothing', async ({
    expect,
  }) => {
    const s = stack();
    const rival = await tenantKey(s, `${RIVAL}-unknown`);
    const tagged = await anchorIdentity(s, 'crm', { belayTenant: 'someone-else' });
    const other = await api(s, 'POST', '/accounts', rival, {
      application: 'crm',
      label: 'x',
      anchorIdentityId: tagged,
    });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('identity_unavailable');
    for (const made of ['ident_1234abcd', randomUUID()]) {
      const unknown = await api(s, 'POST', '/accounts', rival, {
        application: 'crm',
        label: 'x',
        anchorIdentityId: made,
      });
      expect(unknown.status).toBe(422);
      expect(unknown.json.error.code).toBe('identity_unknown');
    }
    // An identity of another application is unknown to this one.
    const shops = await anchorIdentity(s, 'shop');
    const crossed = await api(s, 'POST', '/accounts', rival, {
      application: 'crm',
      label: 'x',
      anchorIdentityId: shops,
    });
    expect(crossed.status).toBe(422);
    expect((await api(s, 'GET', '/accounts', rival)).json.accounts).toEqual([]);
    for (const id of [tagged, shops]) {
      const claim = await s.stack.doc.send(
        new GetCommand({ TableName: s.stack.tableName, Key: { pk: `IDENTITY#${id}`, sk: 'IDENTITY' } }),
      );
      expect(claim.Item).toBeUndefined();
    }
  });

  it('refuses a malformed body without quoting it (it may hold a password)', async ({ expect }) => {
    const s = stack();
    const raw =
      '{"application":"shop","label":"x","credentials":{"username":"u","password":"hunter2-secret" x}}';
    const res = await call(s.apiUrl, 'POST', '/accounts', { key: s.demoKey, raw });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_json');
    expect(res.text).not.toContain('hunter2');
  });

  it('is for admins: a submitter key gets 403 on every accounts route, no key 401', async ({ expect }) => {
    const s = stack();
    const submitter = await tenantKey(s, 'demo', ['submitter', 'approver']);
    for (const [method, path] of [
      ['GET', '/accounts'],
      ['POST', '/accounts'],
      ['GET', '/accounts/acct_demo_shop'],
      ['DELETE', '/accounts/acct_demo_shop'],
      ['GET', '/reports/cost'],
    ] as const) {
      const body =
        method === 'POST' ? { application: 'shop', label: 'x', anchorIdentityId: 'i1' } : undefined;
      expect((await api(s, method, path, submitter, body)).status, `${method} ${path}`).toBe(403);
      expect((await api(s, method, path, '', body)).status, `${method} ${path} without a key`).toBe(401);
    }
    expect((await api(s, 'GET', '/accounts/acct_demo_shop', s.demoKey)).json.account.status).toBe(
      'connected',
    );
  });

  it("reads another tenant's account as missing everywhere, and cannot revoke it", async ({ expect }) => {
    const s = stack();
    const rival = await tenantKey(s, RIVAL);
    expect((await api(s, 'GET', '/accounts/acct_demo_shop', rival)).status).toBe(404);
    expect((await api(s, 'DELETE', '/accounts/acct_demo_shop', rival)).status).toBe(404);
    const list = await api(s, 'GET', '/accounts', rival);
    expect(list.status).toBe(200);
    expect(
      list.json.accounts.filter((a: { accountId: string }) => a.accountId.startsWith('acct_demo')),
    ).toEqual([]);
    // The rival's own account is its own, with a profile named by its tenant.
    const own = await api(s, 'POST', '/accounts', rival, {
      application: 'shop',
      label: 'r',
      anchorIdentityId: await anchorIdentity(s, 'shop'),
    });
    expect(own.json.account.profile).toBe(`${RIVAL}--shop--${own.json.account.accountId}`);
    expect((await api(s, 'GET', `/accounts/${own.json.account.accountId}`, s.demoKey)).status).toBe(404);
    // Untouched for its owner.
    expect((await api(s, 'GET', '/accounts/acct_demo_shop', s.demoKey)).json.account.status).toBe(
      'connected',
    );
  });

  it("cannot submit a job with another tenant's account, profile or session", async ({ expect }) => {
    const s = stack();
    const rival = await tenantKey(s, `${RIVAL}2`);
    const named = await api(s, 'POST', '/jobs', rival, {
      jobId: 'rival-uses-demo-account',
      playbook: 'checkout@1',
      inputs: CHECKOUT_INPUTS,
      accounts: { shop: 'acct_demo_shop' },
    });
    expect(named.status).toBe(422);
    expect(named.json.error.details).toContainEqual(
      expect.objectContaining({
        field: 'accounts.shop',
        message: expect.stringMatching(/not a connected account of this tenant/),
      }),
    );
    // Without naming one, the rival has no shop account to fall back on.
    const implicit = await api(s, 'POST', '/jobs', rival, {
      jobId: 'rival-implicit',
      playbook: 'checkout@1',
      inputs: CHECKOUT_INPUTS,
    });
    expect(implicit.status).toBe(422);
    // A profile, identity or session cannot be named at all.
    for (const extra of [
      { profile: 'demo--shop--acct_demo_shop' },
      { sessionId: 'anything' },
      { identityId: 'ident_demo' },
      { tenantId: 'demo' },
    ]) {
      const res = await api(s, 'POST', '/jobs', rival, {
        jobId: 'rival-extra',
        playbook: 'checkout@1',
        inputs: CHECKOUT_INPUTS,
        accounts: { shop: 'acct_demo_shop' },
        ...extra,
      });
      expect(res.status, JSON.stringify(extra)).toBe(400);
    }
    // Nothing was written for any of them.
    for (const jobId of ['rival-uses-demo-account', 'rival-implicit', 'rival-extra']) {
      expect((await api(s, 'GET', `/jobs/${jobId}`, rival)).status).toBe(404);
    }
  });

  it("masks an account's password in its own tenant's responses only: another tenant reads its own text as sent", async ({
    expect,
  }) => {
    const s = stack();
    const password = `Probe-${randomUUID().slice(0, 8)}-pw`;
    const connected = await api(s, 'POST', '/accounts', s.demoKey, {
      application: 'shop',
      label: 'Probe',
      credentials: { username: 'probe@example.com', password },
    });
    expect(connected.status).toBe(201);
    const tenant = `${RIVAL}5`;
    const rival = await tenantKey(s, tenant);
    // Both tenants' jobs carry the same string (never run: no execution starts them).
    const inputs = {
      ...CHECKOUT_INPUTS,
      shippingAddress: { ...CHECKOUT_INPUTS.shippingAddress, name: password },
    };
    for (const t of ['demo', tenant]) {
      await s.ledger.createJob(
        t,
        'probe-masking',
        { playbook: 'checkout@1', inputs, accounts: { shop: 'acct_probe' }, approvals: [], retryBudget: 3 },
        14,
      );
    }
    try {
      const own = await api(s, 'GET', '/jobs/probe-masking', s.demoKey);
      expect(own.status).toBe(200);
      expect(own.text).not.toContain(password);
      expect(own.json.job.inputs.shippingAddress.name).toBe('[redacted]');
      // Masking it for the rival would tell the rival that a string it chose is another tenant's password.
      const theirs = await api(s, 'GET', '/jobs/probe-masking', rival);
      expect(theirs.status).toBe(200);
      expect(theirs.json.job.inputs.shippingAddress.name).toBe(password);
      // Error responses alike: a 404 quotes the job id asked for.
      const missing = await api(s, 'GET', `/jobs/${password}`, rival);
      expect(missing.status).toBe(404);
      expect(missing.json.error.message).toBe(`job ${password} not found`);
      const ownMissing = await api(s, 'GET', `/jobs/${password}`, s.demoKey);
      expect(ownMissing.status).toBe(404);
      expect(ownMissing.json.error.message).toBe('job [redacted] not found');
    } finally {
      // Never left QUEUED (a job that never asks would hold the demo queue for its grace).
      for (const t of ['demo', tenant]) await s.ledger.transition(t, 'probe-masking', 'CANCELLED');
    }
  });

  it("cannot see or act on another tenant's job (and so on its sessions): 404 at every job route", async ({
    expect,
  }) => {
    const s = stack();
    const rival = await tenantKey(s, `${RIVAL}3`);
    await s.ledger.createJob(
      'demo',
      'demo-private-job',
      {
        playbook: 'checkout@1',
        inputs: CHECKOUT_INPUTS,
        accounts: { shop: 'acct_demo_shop' },
        approvals: [],
        retryBudget: 3,
      },
      14,
    );
    expect((await api(s, 'GET', '/jobs/demo-private-job', s.demoKey)).status).toBe(200);
    const routes: [string, string, unknown?][] = [
      ['GET', '/jobs/demo-private-job'],
      ['GET', '/jobs/demo-private-job/ledger'],
      ['POST', '/jobs/demo-private-job/decisions', { step: 'place-order', decision: 'approve' }],
      ['POST', '/jobs/demo-private-job/mfa', { code: '123456' }],
      ['POST', '/jobs/demo-private-job/cancel'],
    ];
    for (const [method, path, body] of routes) {
      expect((await api(s, method, path, rival, body)).status, `${method} ${path}`).toBe(404);
    }
    expect((await s.ledger.getJob('demo', 'demo-private-job')).status).toBe('QUEUED');
  });

  it("stops, in the engine, a job that names another tenant's account: no session, no lease, account-revoked", async ({
    expect,
  }) => {
    const s = stack();
    // As if the API had let it through: the job item names the demo tenant's account.
    const tenant = `${RIVAL}4`;
    await tenantKey(s, tenant);
    const jobId = 'rival-smuggled-account';
    const { job: created } = await s.ledger.createJob(
      tenant,
      jobId,
      {
        playbook: 'checkout@1',
        inputs: CHECKOUT_INPUTS,
        accounts: { shop: 'acct_demo_shop' },
        approvals: [],
        retryBudget: 3,
      },
      14,
    );
    await s.stack.startJobExecution(created, 0);
    const job = await waitForStatus(s, tenant, jobId, 'FAILED');
    expect(job.failure?.reason).toBe('account-revoked');
    expect(job.sessions).toEqual({});
    expect(s.stack.anchor.sessions().filter((r) => JSON.stringify(r.tags).includes(jobId))).toEqual([]);
    expect(await leaseHolders(s, tenant)).toEqual([]);
  });
});
