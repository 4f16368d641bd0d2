import { describe, expect, it } from 'vitest';
import type { AgentAction } from '../../../lambdas/lib/agent/actions.ts';
import {
  goalTemplateOf,
  normalisedPath,
  structuralFingerprint,
} from '../../../lambdas/lib/agent/cache/key.ts';
import { offerFrom } from '../../../lambdas/lib/agent/cache/offer.ts';
import { leakedValues, valuesOf } from '../../../lambdas/lib/agent/cache/placeholders.ts';
import { sharedForm } from '../../../lambdas/lib/agent/cache/share.ts';
import { memoryActionCacheStore } from '../../../lambdas/lib/agent/cache/store.ts';
import { agentCountersByStep } from '../../../lambdas/lib/agent/counters.ts';
import { cachedForJob } from '../../../lambdas/lib/agent/references.ts';
import { buildCostReport } from '../../../lambdas/lib/api/reports/cost.ts';
import { settlePending, stepCacheSession } from '../../../lambdas/lib/engine/step-cache.ts';
import type { Job, LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import type { ActionCacheKey } from '../../../lambdas/lib/playbooks/contract.ts';
import { redact } from '../../../lambdas/lib/redact.ts';

const form = (contact: string, button = 'Save record') =>
  [
    '- heading "Edit customer" [level=1]',
    '- form:',
    `  - textbox "Contact name": ${contact}`,
    '  - textbox "Phone": +44 117 496 0999',
    `  - button "${button}"`,
    '- link "Customers"',
  ].join('\n');

const KEY: ActionCacheKey = {
  step: 's',
  app: 'crm',
  goal: 'g',
  path: '/customers/{inputs.customerId}/edit',
  fingerprint: 'f',
};

describe('Function: structuralFingerprint', () => {
  it('is the same for another record and for a renamed button, and changes with a field added', () => {
    const base = structuralFingerprint(form('Mei Chen'));
    expect(structuralFingerprint(form('Ada Lovelace'))).toBe(base);
    expect(structuralFingerprint(form('Mei Chen', 'Store changes'))).toBe(base);
    expect(structuralFingerprint(`${form('Mei Chen')}\n  - checkbox "VIP"`)).not.toBe(base);
  });
});

describe('Function: normalisedPath', () => {
  it('names an input value and hides other ids, without the query', () => {
    const values = valuesOf({ customerId: 'C-1003' }, {});
    expect(normalisedPath('http://127.0.0.1:8802/customers/C-1003/edit?x=1', values)).toBe(
      '/customers/{inputs.customerId}/edit',
    );
    expect(normalisedPath('http://127.0.0.1:8802/orders/88123/edit', values)).toBe('/orders/:id/edit');
  });
});

describe('Function: goalTemplateOf', () => {
  it('hashes the goal as written, so other input values give the same key', () => {
    const a = goalTemplateOf('Set {{inputs.name}}', { Name: '{{inputs.name}}' });
    expect(a.hash).toBe(goalTemplateOf('Set {{inputs.name}}', { Name: '{{inputs.name}}' }).hash);
    expect(a.hash).not.toBe(goalTemplateOf('Set {{inputs.other}}', { Name: '{{inputs.name}}' }).hash);
    expect(a.template).not.toContain('Mei');
  });
});

describe('Function: offerFrom', () => {
  const inputs = { customerId: 'C-1003', contactName: 'Mei Chen-Ward', phone: '+44 117 496 0999' };
  const values = valuesOf(inputs, {});
  const fill = (name: string, value: string): AgentAction => ({
    name: 'fill',
    target: { role: 'textbox', name },
    value,
  });
  const click: AgentAction = { name: 'click', target: { role: 'button', name: 'Save record' } };
  const planned = (actions: AgentAction[], source: 'cache' | 'model' = 'model') =>
    actions.map((action) => ({ type: 'action-chosen', action, source }));
  const job = {
    key: KEY,
    goalTemplate: 't',
    values,
    secrets: { password: 'hunter2-secret' },
    served: undefined,
  };

  it('replaces every input value by its placeholder; the next job fills in its own', () => {
    const offer = offerFrom(
      planned([
        fill('Contact name', inputs.contactName),
        fill('Phone', inputs.phone),
        click,
        { name: 'done', summary: `saved ${inputs.customerId}` },
      ]),
      job,
    );
    if ('skipped' in offer) throw new Error(offer.skipped);
    const text = JSON.stringify(offer);
    for (const v of Object.values(inputs)) expect(text).not.toContain(v);
    expect(offer.actions[0]).toEqual({
      name: 'fill',
      target: { role: 'textbox', name: 'Contact name' },
      value: '{{inputs.contactName}}',
    });
    // The next job runs it with its own value (as the agent step runs a cache hit).
    const next = cachedForJob([offer.actions[0] as Record<string, unknown>], {
      inputs: { contactName: 'Ada' },
      evidence: {},
    });
    expect(next?.[0]?.resolved).toEqual(fill('Contact name', 'Ada'));
    expect(offer.healed).toBe(false);
  });

  it('caches nothing that asked a person, was refused, or named a target by the data', () => {
    expect(offerFrom(planned([{ name: 'ask_person', question: 'which?' }]), job)).toEqual({
      skipped: 'the step asked a person',
    });
    expect(offerFrom([{ type: 'action-refused', action: click, source: 'model' }], job)).toMatchObject({
      skipped: 'an action was refused',
    });
    const byData: AgentAction = {
      name: 'click',
      target: { role: 'link', name: `Open ${inputs.contactName}` },
    };
    expect(offerFrom(planned([byData]), job)).toEqual({ skipped: 'a target is named by the job data' });
  });

  it('refuses a list that would still hold a secret value', () => {
    const typed = offerFrom(planned([fill('Password', 'hunter2-secret')]), job);
    expect(typed).toEqual({ skipped: 'the actions would hold secret:password' });
  });

  it('marks a served list that a model changed as healed', () => {
    const offer = offerFrom([...planned([fill('Phone', inputs.phone)], 'cache'), ...planned([click])], {
      ...job,
      served: 'ac_1',
    });
    expect(offer).toMatchObject({ served: 'ac_1', healed: true });
  });
});

describe('Function: leakedValues', () => {
  it('finds an input value or a secret in a list', () => {
    const actions: AgentAction[] = [{ name: 'done', summary: 'Mei Chen-Ward hunter2' }];
    expect(leakedValues(actions, valuesOf({ n: 'Mei Chen-Ward' }, {}), { pw: 'hunter2' })).toEqual([
      'inputs.n',
      'secret:pw',
    ]);
  });

  it('finds values of array inputs at any depth, and short values as whole words', () => {
    const inputs = {
      items: [
        { sku: 'SKU-4471', qty: 12 },
        { sku: 'SKU-9902', qty: 3 },
      ],
      tags: ['north'],
    };
    const values = valuesOf(inputs, {});
    expect(values.map(([k]) => k)).toEqual(
      expect.arrayContaining([
        'inputs.items.0.sku',
        'inputs.items.1.sku',
        'inputs.items.0.qty',
        'inputs.tags.0',
      ]),
    );
    const held: AgentAction[] = [
      { name: 'fill', target: { role: 'textbox', name: 'Item' }, value: 'SKU-9902' },
      { name: 'fill', target: { role: 'spinbutton', name: 'Quantity' }, value: 'qty 12' },
      { name: 'goto', url: '/regions/north' },
    ];
    expect(leakedValues(held, values, {}).sort()).toEqual([
      'inputs.items.0.qty',
      'inputs.items.1.sku',
      'inputs.tags.0',
    ]);
    // Placeholders, vocabulary and a number inside a longer one are no leaks.
    const clean: AgentAction[] = [
      { name: 'fill', target: { role: 'textbox', name: 'Item' }, value: '{{inputs.items.1.sku}}' },
      { name: 'check', target: { role: 'checkbox', name: 'Gift 123' }, checked: true },
    ];
    expect(leakedValues(clean, values, {})).toEqual([]);
  });
});

describe('Function: offerFrom, a job with array inputs', () => {
  it('caches an entry that holds none of the array values, and fills the next job with its own', () => {
    const inputs = {
      items: [
        { sku: 'SKU-4471', qty: '2' },
        { sku: 'SKU-9902', qty: '5' },
      ],
    };
    const values = valuesOf(inputs, {});
    const actions: AgentAction[] = [
      { name: 'fill', target: { role: 'textbox', name: 'First item' }, value: 'SKU-4471' },
      { name: 'fill', target: { role: 'textbox', name: 'Second item' }, value: 'SKU-9902' },
      { name: 'select', target: { role: 'combobox', name: 'Second quantity' }, option: '5' },
      { name: 'click', target: { role: 'button', name: 'Add items' } },
    ];
    const offer = offerFrom(
      actions.map((action) => ({ type: 'action-chosen', action, source: 'model' as const })),
      { key: KEY, goalTemplate: 't', values, secrets: {}, served: undefined },
    );
    if ('skipped' in offer) throw new Error(offer.skipped);
    const text = JSON.stringify(offer.actions);
    for (const item of inputs.items) expect(text).not.toContain(item.sku);
    expect(offer.actions[2]).toMatchObject({ option: '{{inputs.items.1.qty}}' });
    const next = cachedForJob(offer.actions as Record<string, unknown>[], {
      inputs: {
        items: [
          { sku: 'A-1', qty: '1' },
          { sku: 'B-2222', qty: '9' },
        ],
      },
      evidence: {},
    });
    expect(next?.[1]?.resolved).toMatchObject({ value: 'B-2222' });
    expect(next?.[2]?.resolved).toMatchObject({ option: '9' });
    // A job without those values is not served the entry.
    expect(
      cachedForJob(offer.actions as Record<string, unknown>[], { inputs: {}, evidence: {} }),
    ).toBeUndefined();
  });

  it('stores an entry that holds none of the array values once the step verified', async () => {
    const inputs = { items: [{ sku: 'SKU-4471' }, { sku: 'SKU-9902' }] };
    const actions: AgentAction[] = [
      { name: 'fill', target: { role: 'textbox', name: 'First item' }, value: 'SKU-4471' },
      { name: 'fill', target: { role: 'textbox', name: 'Second item' }, value: 'SKU-9902' },
      { name: 'done', summary: 'added SKU-4471 and SKU-9902' },
    ];
    const offer = offerFrom(
      actions.map((action) => ({ type: 'action-chosen', action, source: 'model' as const })),
      { key: KEY, goalTemplate: 't', values: valuesOf(inputs, {}), secrets: {}, served: undefined },
    );
    if ('skipped' in offer) throw new Error(offer.skipped);
    const store = memoryActionCacheStore();
    const session = stepCacheSession(store, { tenantId: 't1', playbookId: 'p@1' }, 'job-1');
    session.port.offer(offer);
    expect(await session.settle(true, 'verified')).toBe('written');
    const stored = JSON.stringify([...store.items.values()]);
    expect(stored).not.toContain('SKU-4471');
    expect(stored).not.toContain('SKU-9902');
    expect(stored).toContain('{{inputs.items.1.sku}}');
  });
});

describe('Function: stepCacheSession', () => {
  const scope = { tenantId: 't1', playbookId: 'p@1' };
  const offer = { key: KEY, actions: [{ name: 'done', summary: '' }], goalTemplate: 't', healed: false };

  it('writes an offer only once the step verified', async () => {
    const store = memoryActionCacheStore();
    const unverified = stepCacheSession(store, scope, 'job-1');
    unverified.port.offer(offer);
    expect(await unverified.settle(false, 'did not verify')).toBe('none');
    expect(await store.get(scope, KEY)).toBeUndefined();
    const verified = stepCacheSession(store, scope, 'job-2');
    verified.port.offer(offer);
    expect(await verified.settle(true, 'ok')).toBe('written');
    expect(await store.get(scope, KEY)).toMatchObject({ jobId: 'job-2', status: 'verified' });
  });

  it("demotes the entry a failed attempt ran from; another tenant's entry is never found", async () => {
    const store = memoryActionCacheStore();
    const first = stepCacheSession(store, scope, 'job-1');
    first.port.offer(offer);
    await first.settle(true, 'ok');
    expect(await stepCacheSession(store, { ...scope, tenantId: 't2' }, 'j').port.lookup(KEY)).toBeUndefined();
    const second = stepCacheSession(store, scope, 'job-2');
    const served = await second.port.lookup(KEY);
    expect(served).toBeDefined();
    second.port.serving(KEY, served?.entryId as string);
    expect(await second.settle(false, 'the step did not verify')).toBe('demoted');
    expect(await store.get(scope, KEY)).toBeUndefined();
  });

  it("settles an unconfirmed write's cache with its probe: absent demotes; done (a probe's or a person's word) writes nothing", async () => {
    const store = memoryActionCacheStore();
    const first = stepCacheSession(store, scope, 'job-1');
    first.port.offer(offer);
    await first.settle(true, 'ok');
    const entryId = (await store.get(scope, KEY))?.entryId as string;
    // A served attempt that reached done, its answer lost: the probe finds the write done.
    const lost = stepCacheSession(store, scope, 'job-2');
    lost.port.serving(KEY, entryId);
    lost.port.offer({ ...offer, served: entryId });
    const pending = lost.pending();
    // Only what it served is kept: an offer from an attempt that did not verify is never written.
    expect(pending).toEqual({ served: { key: KEY, entryId } });
    const stored = JSON.parse(JSON.stringify(pending));
    expect(await settlePending(store, scope, 'job-2', stored, 'done')).toBe('none');
    expect(await store.get(scope, KEY)).toMatchObject({ entryId, status: 'verified', hits: 0 });
    // An entry written before this rule, with its offer: still nothing is written on done.
    const older = { ...stored, offer: { ...offer, actions: [{ name: 'done', summary: 'older' }] } };
    expect(await settlePending(store, scope, 'job-2', older, 'done')).toBe('none');
    expect((await store.get(scope, KEY))?.actions).toEqual(offer.actions);
    // Served, and the write did not happen: demoted.
    expect(await settlePending(store, scope, 'job-3', stored, 'absent')).toBe('demoted');
    expect(await store.get(scope, KEY)).toBeUndefined();
    // A new list whose write a probe (or a person) settled is never kept, done or absent.
    const fresh = stepCacheSession(store, scope, 'job-4');
    fresh.port.offer(offer);
    expect(fresh.pending()).toBeUndefined();
    expect(await settlePending(store, scope, 'job-4', { offer } as never, 'done')).toBe('none');
    expect(await settlePending(store, scope, 'job-4', {}, 'absent')).toBe('none');
    expect(store.items.size).toBe(1);
    expect(await store.get(scope, KEY)).toBeUndefined();
  });

  it('replaces a healed entry only while it is still the one stored', async () => {
    const store = memoryActionCacheStore();
    const first = stepCacheSession(store, scope, 'job-1');
    first.port.offer(offer);
    await first.settle(true, 'ok');
    const entryId = (await store.get(scope, KEY))?.entryId as string;
    const healed = stepCacheSession(store, scope, 'job-2');
    healed.port.offer({ ...offer, served: entryId, healed: true });
    expect(await healed.settle(true, 'ok')).toBe('healed');
    const late = stepCacheSession(store, scope, 'job-3');
    late.port.offer({ ...offer, served: entryId, healed: true });
    expect(await late.settle(true, 'ok')).toBe('kept');
    expect(await store.get(scope, KEY)).toMatchObject({ jobId: 'job-2', healedFrom: entryId });
  });
});

describe('Function: agentCountersByStep', () => {
  const e = (type: string, detail: Record<string, unknown> = {}, cost = {}): LedgerEntry =>
    ({ type, step: 's', detail, cost, at: 't', seq: 1 }) as unknown as LedgerEntry;
  const cached = (n: number) => e('action-chosen', { n, source: 'cache' }, { modelTokens: 0, modelUsd: 0 });
  const model = (n: number, type = 'action-chosen') =>
    e(type, { n, model: 'm' }, { modelTokens: 10, modelUsd: 0.001 });

  it('counts a cached attempt that failed as a miss, not as actions served', () => {
    const counters = agentCountersByStep([
      cached(1),
      cached(2),
      e('step-failed'),
      model(1),
      model(2),
      e('step-completed'),
    ]);
    expect(counters.s).toEqual({
      modelCalls: 2,
      cachedActions: 0,
      heals: 0,
      failedReplayActions: 2,
      usage: 20,
      modelUsd: 0.002,
      cache: 'miss',
    });
  });

  it('survives the ledger redaction whole (no key is named like a secret)', () => {
    const counters = agentCountersByStep([model(1), e('step-completed')]).s;
    expect(redact({ agent: counters })).toEqual({ agent: counters });
  });

  it('tells a hit from a heal', () => {
    expect(agentCountersByStep([cached(1), cached(2), e('step-completed')]).s).toMatchObject({
      cache: 'hit',
      cachedActions: 2,
      modelCalls: 0,
    });
    expect(agentCountersByStep([cached(1), model(2, 'action-healed'), e('step-completed')]).s).toMatchObject({
      cache: 'healed',
      heals: 1,
      modelCalls: 1,
    });
  });

  it('reaches the cost report, where a cached action is no model decision', () => {
    const job = { status: 'SUCCEEDED', jobId: 'j', tenantId: 't', sessions: {} } as unknown as Job;
    const report = buildCostReport({
      tenantId: 't',
      from: '2026-01-01T00:00:00Z',
      to: '2027-01-01T00:00:00Z',
      jobs: [{ job, entries: [cached(1), model(2, 'action-healed'), e('step-completed')] }],
      now: new Date(),
    });
    expect(report.agent).toMatchObject({
      modelCalls: 1,
      cachedActions: 1,
      heals: 1,
      steps: { hit: 0, healed: 1, miss: 0 },
    });
    expect(Object.keys(report.models)).toEqual(['m']);
  });
});

describe('Function: sharedForm', () => {
  const template = goalTemplateOf(
    'In the CRM, set the contact of {{inputs.id}} to "{{inputs.name}}", then save.',
    {
      'Contact name': '{{inputs.name}}',
    },
  ).template;

  it('keeps a list whose texts are placeholders and words of the templates, without the summary', () => {
    const actions = [
      { name: 'fill', target: { role: 'textbox', name: 'Contact name' }, value: '{{inputs.name}}' },
      { name: 'press', key: 'Tab' },
      { name: 'click', target: { role: 'button', name: 'Save' } },
      { name: 'done', summary: 'Saved the contact of Cobalt Cycles' },
    ];
    expect(sharedForm(actions, template)).toEqual([...actions.slice(0, 3), { name: 'done', summary: '' }]);
  });

  it('refuses a list with text the page showed: a target, an option or a URL not in the templates', () => {
    const fill = {
      name: 'fill',
      target: { role: 'textbox', name: 'Contact name' },
      value: '{{inputs.name}}',
    };
    for (const other of [
      { name: 'click', target: { role: 'button', name: 'Store changes' } },
      { name: 'select', target: { role: 'combobox', name: 'Contact name' }, option: 'Gold tier' },
      { name: 'goto', url: '/customers/{{inputs.id}}/billing' },
      { name: 'fill', target: { role: 'textbox', name: 'Contact name' }, value: 'Cobalt {{inputs.name}}' },
    ]) {
      expect(sharedForm([fill, other], template), JSON.stringify(other)).toBeUndefined();
    }
  });
});

describe('Function: stepCacheSession, a playbook that shares its cache', () => {
  const template = goalTemplateOf('Set "{{inputs.name}}", then save.', {
    'Contact name': '{{inputs.name}}',
  }).template;
  const fillName = {
    name: 'fill',
    target: { role: 'textbox', name: 'Contact name' },
    value: '{{inputs.name}}',
  };
  const general: Record<string, unknown>[] = [
    fillName,
    { name: 'click', target: { role: 'button', name: 'Save' } },
    { name: 'done', summary: '' },
  ];
  const pageText: Record<string, unknown>[] = [
    fillName,
    { name: 'click', target: { role: 'button', name: 'Store changes' } },
  ];
  const t1 = { tenantId: 't1', playbookId: 'p@1' };
  const t2 = { tenantId: 't2', playbookId: 'p@1' };
  const offer = (actions: Record<string, unknown>[], served?: string, healed = false) => ({
    key: KEY,
    actions,
    goalTemplate: template,
    healed,
    ...(served ? { served } : {}),
  });

  it("serves one tenant's list of the playbook's own text to another, and settles it where it is kept", async () => {
    const store = memoryActionCacheStore();
    const first = stepCacheSession(store, t1, 'job-1', {}, 'shared');
    first.port.offer(offer(general));
    expect(await first.settle(true, 'ok')).toBe('written');
    expect(await store.get(t1, KEY)).toBeUndefined();
    const kept = await store.get({ ...t1, shared: true }, KEY);
    expect(kept).toMatchObject({ status: 'verified', actions: general });
    const sharedItems = [...store.items].filter(([id]) => id.startsWith('AC#SHARED#p@1|'));
    expect(sharedItems).toHaveLength(1);

    const second = stepCacheSession(store, t2, 'job-2', {}, 'shared');
    const served = await second.port.lookup(KEY);
    expect(served?.entryId).toBe(kept?.entryId);
    second.port.serving(KEY, served?.entryId as string);
    expect(second.pending()?.served).toMatchObject({ shared: true });
    second.port.offer(offer(general, served?.entryId));
    expect(await second.settle(true, 'ok')).toBe('hit');
    expect((await store.get({ ...t2, shared: true }, KEY))?.hits).toBe(1);

    // A failed attempt from it demotes the shared entry.
    const third = stepCacheSession(store, t2, 'job-3', {}, 'shared');
    third.port.serving(KEY, (await third.port.lookup(KEY))?.entryId as string);
    expect(await third.settle(false, 'did not verify')).toBe('demoted');
    expect(await store.get({ ...t1, shared: true }, KEY)).toBeUndefined();
  });

  it("keeps a list with page text as the tenant's own; a playbook that does not share never serves across tenants", async () => {
    const store = memoryActionCacheStore();
    const first = stepCacheSession(store, t1, 'job-1', {}, 'shared');
    first.port.offer(offer(pageText));
    expect(await first.settle(true, 'ok')).toBe('written');
    expect(await store.get(t1, KEY)).toMatchObject({ actions: pageText });
    expect(await stepCacheSession(store, t2, 'job-2', {}, 'shared').port.lookup(KEY)).toBeUndefined();

    const own = stepCacheSession(store, t1, 'job-3');
    own.port.offer(offer(general));
    await own.settle(true, 'ok');
    expect(await stepCacheSession(store, t2, 'job-4').port.lookup(KEY)).toBeUndefined();
    expect(await store.get({ ...t1, shared: true }, KEY)).toBeUndefined();
  });

  it("prefers the tenant's own entry, and a heal to the playbook's own text moves it to the shared one", async () => {
    const store = memoryActionCacheStore();
    const own = stepCacheSession(store, t1, 'job-1');
    own.port.offer(offer(pageText));
    await own.settle(true, 'ok');
    const ownId = (await store.get(t1, KEY))?.entryId as string;

    const healing = stepCacheSession(store, t1, 'job-2', {}, 'shared');
    expect((await healing.port.lookup(KEY))?.entryId).toBe(ownId);
    healing.port.serving(KEY, ownId);
    healing.port.offer(offer(general, ownId, true));
    expect(await healing.settle(true, 'ok')).toBe('healed');
    expect(await store.get(t1, KEY)).toBeUndefined();
    expect(await store.get({ ...t2, shared: true }, KEY)).toMatchObject({ actions: general });
  });
});
