/**
 * The action cache across jobs, in real Chromium against the demo CRM with the cache in
 * DynamoDB Local, each job's step run as RunStep runs it (run, verify, then settle the cache):
 * a second job with other inputs needs no model call; a renamed button heals with one and the
 * next job hits the healed entry; nothing unverified is served; an entry holds no input value
 * or secret; a tenant never gets another tenant's entry; a failed replay demotes its entry;
 * a target gone after the write may have been sent is not healed. A write the page did not
 * confirm settles the cache with its probe, as RunStep and Reconcile do: found done, a list
 * that reached its `done` is kept; found absent, or done by a list that failed on, demotes.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoCredentials } from '../../../demo/accounts.ts';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { siteAdmin } from '../../../demo/sites/admin-client.ts';
import type { StartedSites } from '../../../demo/sites/index.ts';
import { startSites } from '../../../demo/sites/index.ts';
import { agentStep } from '../../../lambdas/lib/agent/agent-step.ts';
import { type ActionCacheStore, createActionCacheStore } from '../../../lambdas/lib/agent/cache/store.ts';
import { HealAfterWriteError } from '../../../lambdas/lib/agent/errors.ts';
import { configureAgentModels } from '../../../lambdas/lib/agent/registry.ts';
import { settlePending, stepCacheSession } from '../../../lambdas/lib/engine/step-cache.ts';
import type { ActionCacheScope, Step, StepContext } from '../../../lambdas/lib/playbooks/contract.ts';
import { memoryStepActions } from '../../../lambdas/lib/playbooks/memory-actions.ts';
import {
  type CrmContactAgentInputs,
  crmContactAgentPlaybook,
  updateContactByAgent as step,
} from '../../../playbooks/crm-agent/index.ts';
import { crm as crmApplication } from '../../../playbooks/demo-sites.ts';
import { CountingPolicy } from '../../support/agent.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { contextFor, launchChromium, newJob, ready, signedInContext } from '../playbooks/harness.ts';

const A: CrmContactAgentInputs = {
  customerId: 'C-1003',
  contactName: 'Mei Chen-Ward',
  phone: '+44 117 496 0999',
};
const B: CrmContactAgentInputs = {
  customerId: 'C-1002',
  contactName: 'Oskar Lindqvist',
  phone: '+46 8 555 0142',
};
const C: CrmContactAgentInputs = {
  customerId: 'C-1001',
  contactName: 'Ana Ribeiro',
  phone: '+351 21 555 0188',
};

const ddb = useDynamoDb();
let browser: Browser;
let sites: StartedSites;
let crm: SiteAdmin;
let context: BrowserContext;
let page: Page;
let policy: CountingPolicy;
let store: ActionCacheStore;
let tableName: string;

beforeAll(async () => {
  sites = await startSites();
  crm = siteAdmin(sites.crm.baseUrl, sites.adminToken);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await sites?.stop();
});

beforeEach(async () => {
  await crm.reset();
  context = await browser.newContext();
  page = await context.newPage();
  await signedInContext(context, sites.crm.baseUrl, 'crm', 'ada@example.com');
  policy = new CountingPolicy();
  configureAgentModels(() => policy);
  tableName = await ddb.createTable('cache');
  store = createActionCacheStore({ doc: ddb.doc(), tableName });
});

afterEach(async () => {
  await context.close();
});

/**
 * One job's agent step as RunStep runs it: run, verify, then settle the cache (kept only if
 * verified). A write that did not verify (or threw once it may have been sent) is unconfirmed:
 * its cache is pending until the probe says, as Reconcile settles it.
 */
async function runJob(
  inputs: CrmContactAgentInputs,
  options: { tenant?: string; step?: Step<CrmContactAgentInputs>; sharing?: ActionCacheScope } = {},
) {
  const s = options.step ?? step;
  const job = newJob(sites, inputs, { crm: 'ada@example.com' });
  const scope = { tenantId: options.tenant ?? 'tenant-a', playbookId: crmContactAgentPlaybook.id };
  const session = stepCacheSession(store, scope, job.jobId, {}, options.sharing);
  const actions = memoryStepActions({ cache: session.port });
  const ctx: StepContext<CrmContactAgentInputs> = { ...contextFor(job, s), actions };
  expect(await ready(s, page, ctx)).toEqual({ ok: true });
  const before = policy.calls;
  let error: unknown;
  await s.run(page, ctx).catch((err: unknown) => {
    error = err;
  });
  const evidence = error ? null : await s.verify(page, ctx);
  const cache = await (async () => {
    if (evidence !== null) return session.settle(true, 'verified');
    // A list that went on past the write with a target the page lacks is demoted at once.
    const pending = error instanceof HealAfterWriteError ? undefined : session.pending();
    if (!s.probe || !pending) return session.settle(false, error ? String(error) : 'the step did not verify');
    const found = await s.probe(page, ctx);
    return found.status === 'done' || found.status === 'absent'
      ? settlePending(store, scope, job.jobId, pending, found.status)
      : ('none' as const);
  })();
  const entries = actions.entries;
  return {
    calls: policy.calls - before,
    evidence,
    cache,
    error,
    fromCache: entries.filter((e) => e.detail.source === 'cache').map((e) => e.detail.describe),
    healed: entries.filter((e) => e.type === 'action-healed'),
  };
}

type Options = Parameters<typeof agentStep<CrmContactAgentInputs>>[0];

/** The same step (same id, goal, fields and start: the same cache key) with another verify (and probe). */
function sameStepVerifiedBy(
  verify: Options['verify'],
  probe: Options['probe'] = step.probe,
): ReturnType<typeof agentStep<CrmContactAgentInputs>> {
  return agentStep<CrmContactAgentInputs>({ ...sameStepOptions(probe), verify });
}

/** The step's options (id, goal, fields, start, probe), for variants of it. */
function sameStepOptions(probe: Options['probe'] = step.probe): Omit<Options, 'verify'> {
  return {
    id: step.id,
    title: step.title,
    kind: 'write',
    app: 'crm',
    application: crmApplication,
    start: (ctx) => `/customers/${ctx.inputs.customerId}/edit`,
    goal: step.agent.goal,
    fields: { 'Contact name': '{{inputs.contactName}}', Phone: '{{inputs.phone}}' },
    maxActions: 6,
    ...(probe ? { probe } : {}),
  };
}

/**
 * The step with a goal that names the save button ("Save record"): every text of its action
 * list is then the playbook's own, so a playbook that shares its cache may keep it for every tenant.
 */
const namesItsButton = agentStep<CrmContactAgentInputs>({
  ...sameStepOptions(),
  goal: 'In the CRM, set the contact name of customer {{inputs.customerId}} to "{{inputs.contactName}}" and the phone to "{{inputs.phone}}", then press "Save record".',
  verify: step.verify,
});

/** The same step whose verify never finds the change (its probe, the playbook's, does). */
const neverVerifies = sameStepVerifiedBy(async () => null);
/** The same step whose verify and probe both never find it: the write did not happen, as far as Belay can tell. */
const neverFound = sameStepVerifiedBy(
  async () => null,
  async () => ({ status: 'absent' }),
);

/**
 * The same step again, whose verify reads the saved record in either layout (the playbook's
 * reads the classic layout's test ids): the URL says saved and the page shows the new contact.
 */
const verifiesInEitherLayout = sameStepVerifiedBy(async (page, ctx) =>
  /[?&]saved=\d+/.test(page.url()) &&
  ((await page.locator('body').textContent()) ?? '').includes(ctx.inputs.contactName)
    ? { saved: ctx.inputs.customerId }
    : null,
);

describe('Action cache: crm-contact-agent@1 update-contact across jobs', () => {
  it('runs a second job with other inputs with zero model calls, and it verifies', async () => {
    const first = await runJob(A);
    expect(first).toMatchObject({ calls: 4, cache: 'written', fromCache: [] });
    const second = await runJob(B);
    expect(second.calls).toBe(0);
    expect(second.evidence).toEqual({ customerId: B.customerId, contact: B.contactName, phone: B.phone });
    expect(second.fromCache).toEqual([
      `fill textbox "Contact name" = "${B.contactName}"`,
      `fill textbox "Phone" = "${B.phone}"`,
      'click button "Save record"',
      'done: the form was filled and submitted',
    ]);
    expect(second.cache).toBe('hit');
    expect((await crm.writes()).count).toBe(2);
  });

  it('keeps no input value and no secret in the entry (the table scanned)', async () => {
    expect((await runJob(A)).cache).toBe('written');
    const items = (await ddb.doc().send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    expect(items).toHaveLength(1);
    const text = JSON.stringify(items);
    for (const value of [
      ...Object.values(A),
      demoCredentials('crm', 'ada@example.com').password,
      'ada@example.com',
    ]) {
      expect(text).not.toContain(value);
    }
    expect(text).toContain('{{inputs.contactName}}');
  });

  it('never serves an entry from a run that did not verify', async () => {
    const unverified = await runJob(A, { step: neverFound });
    expect(unverified).toMatchObject({ calls: 4, evidence: null, cache: 'none' });
    const next = await runJob(B);
    expect(next).toMatchObject({ calls: 4, fromCache: [], cache: 'written' });
  });

  it("does not serve a tenant's entry to another tenant", async () => {
    expect((await runJob(A, { tenant: 'tenant-a' })).cache).toBe('written');
    const other = await runJob(B, { tenant: 'tenant-b' });
    expect(other).toMatchObject({ calls: 4, fromCache: [] });
    expect(other.evidence).not.toBeNull();
  });

  it("shares a list of the playbook's own text across tenants when the playbook opts in, with no tenant in it", async () => {
    // The playbook's own goal names every control it uses; a page's label it does not name stays the tenant's.
    const shared = { step: namesItsButton, sharing: 'shared' } as const;
    expect((await runJob(A, { tenant: 'tenant-a', ...shared })).cache).toBe('written');
    const items = (await ddb.doc().send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    expect(items.map((i) => i.pk)).toEqual([`AC#SHARED#${crmContactAgentPlaybook.id}`]);
    const text = JSON.stringify(items);
    for (const value of [...Object.values(A), 'tenant-a', 'ada@example.com'])
      expect(text).not.toContain(value);
    const other = await runJob(B, { tenant: 'tenant-b', ...shared });
    expect(other).toMatchObject({ calls: 0, cache: 'hit' });
    expect(other.evidence).not.toBeNull();
  });

  it('heals a renamed button with one model call, and the next job hits the healed entry', async () => {
    expect((await runJob(A, { step: verifiesInEitherLayout })).cache).toBe('written');
    await crm.setFaults({ changedLayout: true }); // the save button is now "Store changes", the chrome moved
    const healing = await runJob(B, { step: verifiesInEitherLayout });
    expect(healing.calls).toBe(1);
    expect(healing.healed.map((e) => e.detail.describe)).toEqual(['click button "Store changes"']);
    expect(healing.evidence).not.toBeNull();
    expect(healing.cache).toBe('healed');
    const next = await runJob(C, { step: verifiesInEitherLayout });
    expect(next).toMatchObject({ calls: 0, cache: 'hit' });
    expect(next.fromCache).toContain('click button "Store changes"');
    expect(next.evidence).not.toBeNull();
  });

  it('demotes the entry a failed replay ran from: the next job asks the model', async () => {
    expect((await runJob(A)).cache).toBe('written');
    const failed = await runJob(B, { step: neverFound });
    expect(failed).toMatchObject({ calls: 0, evidence: null, cache: 'demoted' });
    const next = await runJob(C);
    expect(next).toMatchObject({ calls: 4, fromCache: [], cache: 'written' });
  });

  it('keeps the entry of a replay whose answer was lost when the probe finds the write done, counting no hit', async () => {
    expect((await runJob(A)).cache).toBe('written');
    // The page never confirms (as when the site's answer is dropped); the record shows the write.
    const unconfirmed = await runJob(B, { step: neverVerifies });
    expect(unconfirmed).toMatchObject({ calls: 0, evidence: null, cache: 'none' });
    const items = (await ddb.doc().send(new ScanCommand({ TableName: tableName }))).Items ?? [];
    expect(items.map((i) => [i.status, i.hits])).toEqual([['verified', 0]]);
    const next = await runJob(C);
    expect(next).toMatchObject({ calls: 0, cache: 'hit' });
    expect(next.evidence).not.toBeNull();
  });

  it("writes no entry from a step its probe completed (a probe's or a person's word is no verified run)", async () => {
    const unconfirmed = await runJob(A, { step: neverVerifies });
    expect(unconfirmed).toMatchObject({ calls: 4, evidence: null, cache: 'none' });
    expect((await ddb.doc().send(new ScanCommand({ TableName: tableName }))).Items ?? []).toEqual([]);
    // The next job asks the model, and its own verified run writes the entry.
    expect(await runJob(B)).toMatchObject({ calls: 4, fromCache: [], cache: 'written' });
  });

  it('does not heal a target gone after the write may have been sent: the write is uncertain', async () => {
    expect((await runJob(A)).cache).toBe('written');
    // An entry whose list goes on after the submitting click with a target the page no longer has.
    const key = (await findKey())!;
    const entry = (await store.get(key.scope, key.key))!;
    const actions = [
      ...entry.actions.slice(0, 3),
      { name: 'click', target: { role: 'button', name: 'Confirm' } },
    ];
    expect(await store.put(key.scope, { ...entry, actions }, { entryId: entry.entryId })).toBe(true);
    const run = await runJob(B);
    expect(run.error).toBeInstanceOf(HealAfterWriteError);
    expect(run.calls).toBe(0);
    expect(run.healed).toEqual([]);
    expect(run.cache).toBe('demoted');
  });
});

/** The one entry's scope and key, as the table holds them. */
async function findKey() {
  const items = (await ddb.doc().send(new ScanCommand({ TableName: tableName }))).Items ?? [];
  const item = items[0];
  if (!item) return undefined;
  return {
    scope: { tenantId: item.tenantId as string, playbookId: item.playbookId as string },
    key: item.key as Parameters<ActionCacheStore['get']>[1],
  };
}
