/**
 * How the chaos suite reads the sites' own records without a stack: which committed writes
 * belong to which write step of a job counted by site or on its own records, and what a site
 * answers of the admin contract (a fake site admin: no network).
 */
import { describe, expect, it } from 'vitest';
import type { AdminFaults, AdminWrites, SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { AdminRequestError } from '../../../demo/sites/errors.ts';
import { attributeCommits, newItems, type SiteItem } from '../../../tools/chaos/attribution.ts';
import { siteCounts } from '../../../tools/chaos/counting.ts';
import { faultsSiteCannotTake } from '../../../tools/chaos/faults.ts';
import { siteCapabilities } from '../../../tools/chaos/sites.ts';
import { adminTokenFor } from '../../../tools/chaos/stack-process.ts';

const item = (key: string, customerId: string, at: string): SiteItem => ({ key, customerId, at });
const t = (s: number): string => new Date(Date.UTC(2026, 0, 1, 10, 0, s)).toISOString();

describe('Function: newItems', () => {
  it('answers what the site committed since, however many equal items it already held', () => {
    const a = item('k1', 'C-1', t(1));
    const b = item('k2', 'C-2', t(2));
    expect(newItems([a], [a, b])).toEqual([b]);
    expect(newItems([a], [a, a])).toEqual([a]);
    expect(newItems([a, b], [b, a])).toEqual([]);
    expect(newItems([], [])).toEqual([]);
  });
});

describe('Function: attributeCommits', () => {
  const save = { site: 'crm', step: 'update-contact', key: 'job:update-contact:d' };

  it('gives a job’s one write step every write its site committed, whatever key the page sent', () => {
    const once = attributeCommits([save], { crm: [item('page-key-1', 'C-1003', t(5))] }, {});
    expect(once).toEqual({ counts: { [save.key]: 1 }, problems: [] });
    // A write sent twice (a resend, a second click) shows as 2: the run fails on it.
    const twice = attributeCommits(
      [save],
      { crm: [item('page-key-1', 'C-1003', t(5)), item('page-key-2', 'C-1003', t(6))] },
      {},
    );
    expect(twice.counts[save.key]).toBe(2);
    expect(attributeCommits([save], { crm: [] }, {}).counts[save.key]).toBe(0);
  });

  it('splits the writes of several steps on one site by key, else by time after each intent', () => {
    const first = { site: 'crm', step: 'a', key: 'job:a:d' };
    const second = { site: 'crm', step: 'b', key: 'job:b:d' };
    const intents = { a: Date.parse(t(10)), b: Date.parse(t(20)) };
    const fresh = {
      crm: [
        item('random-1', 'C-1', t(11)),
        item('job:b:d', 'C-1', t(12)),
        item('random-2', 'C-1', t(21)),
        item('random-3', 'C-1', t(25)),
      ],
    };
    expect(attributeCommits([first, second], fresh, intents)).toEqual({
      counts: { 'job:a:d': 1, 'job:b:d': 3 },
      problems: [],
    });
  });

  it('says so when a write under no step’s key has no time to place it by', () => {
    const first = { site: 'crm', step: 'a', key: 'job:a:d' };
    const second = { site: 'crm', step: 'b', key: 'job:b:d' };
    const { counts, problems } = attributeCommits(
      [first, second],
      { crm: [{ key: 'random' }, { key: 'job:a:d' }] },
      { a: 1, b: 2 },
    );
    expect(counts).toEqual({ 'job:a:d': 1, 'job:b:d': 0 });
    expect(problems).toEqual([expect.stringMatching(/^crm: 1 committed write\(s\) under no step's key/)]);
  });
});

describe('Function: siteCounts', () => {
  const writes = [
    { site: 'crm', step: 'update-contact', key: 'job:update-contact:d', countedBy: 'site' as const },
  ];
  const listing = (items: SiteItem[]): AdminWrites =>
    ({
      site: 'crm',
      kind: 'crm-change',
      count: items.length,
      items,
      countsByKey: {},
      attemptsByKey: {},
    }) as AdminWrites;

  it('counts, on a job’s own records, the writes its site committed there while it ran, and no other job’s', () => {
    const earlier = item('page-key-0', 'C-1010', t(1));
    const after = [earlier, item('page-key-1', 'C-1010', t(5)), item('page-key-2', 'C-1011', t(6))];
    const spec = { counting: 'records' as const, scope: { field: 'customerId', values: ['C-1010'] }, writes };
    expect(siteCounts(spec, { crm: [earlier] }, { crm: listing(after) }, [])).toEqual({
      counts: { [writes[0]?.key as string]: 1 },
      problems: [],
    });
    // Holding the site (no scope), the other customer's write would be counted as the job's.
    expect(
      siteCounts(
        { ...spec, counting: 'site', scope: undefined },
        { crm: [earlier] },
        { crm: listing(after) },
        [],
      ).counts,
    ).toEqual({
      [writes[0]?.key as string]: 2,
    });
  });

  it('counts under the step’s key where the playbook sends it', () => {
    const key = writes[0]?.key as string;
    const records = { crm: { ...listing([]), countsByKey: { [key]: 2, other: 1 } } };
    expect(siteCounts({ counting: 'key', writes }, {}, records, []).counts).toEqual({ [key]: 2 });
  });
});

/** A site admin that answers only what it is given; the rest is a 404, as a site without the route. */
function fakeSite(answers: {
  writes?: Partial<AdminWrites>;
  faults?: Partial<AdminFaults>;
  expired?: number;
}): SiteAdmin {
  const missing = (path: string) => (): Promise<never> =>
    Promise.reject(new AdminRequestError(path, 404, 'not found'));
  const or = <T>(value: T | undefined, path: string): (() => Promise<T>) =>
    value === undefined ? missing(path) : () => Promise.resolve(value);
  return {
    writes: or(answers.writes as AdminWrites | undefined, 'writes'),
    requests: missing('requests'),
    clearRequests: missing('requests'),
    expireSessions: or(
      answers.expired === undefined ? undefined : { expired: answers.expired },
      'sessions/expire',
    ),
    faults: or(answers.faults as AdminFaults | undefined, 'faults'),
    setFaults: or(answers.faults as AdminFaults | undefined, 'faults'),
    outbox: missing('outbox'),
    latestCode: missing('outbox'),
    reset: missing('reset'),
  };
}

describe('Function: siteCapabilities', () => {
  const writes = { items: [{ key: 'k' }], countsByKey: { k: 1 } };
  const faults = { changedLayout: false, dropNextWriteResponse: false, dropMode: 'status-line' as const };

  it('finds the whole contract on a site that answers it', async () => {
    const caps = await siteCapabilities(fakeSite({ writes, faults, expired: 0 }));
    expect(caps).toEqual({ records: true, faults: true, sessions: true });
    expect(faultsSiteCannotTake(caps)).toEqual([]);
  });

  it('finds a records endpoint alone, and names the faults such a site cannot take', async () => {
    const caps = await siteCapabilities(fakeSite({ writes }));
    expect(caps).toEqual({ records: true, faults: false, sessions: false });
    expect(faultsSiteCannotTake(caps)).toEqual([
      'sign-in-expiry',
      'drop-write-response',
      'drop-write-no-byte',
      'layout-change',
    ]);
  });

  it('does not take a records answer of another shape', async () => {
    const caps = await siteCapabilities(fakeSite({ writes: { items: [{ id: 1 }] } as never, faults: {} }));
    expect(caps).toEqual({ records: false, faults: false, sessions: false });
  });
});

describe('Function: adminTokenFor', () => {
  const demo = ['http://127.0.0.1:8801', 'http://127.0.0.1:8802'];
  it.each([
    ['a demo site of the stack', 'http://127.0.0.1:8802/', {}, 'stack-token'],
    [
      'a site started apart, with BELAY_SITES_ADMIN_TOKEN',
      'http://127.0.0.1:9100',
      { BELAY_SITES_ADMIN_TOKEN: 'own' },
      'own',
    ],
    ['a site started apart, without it', 'http://127.0.0.1:9100', {}, 'stack-token'],
  ])('sends %s its token', (_what, url, env, want) => {
    expect(adminTokenFor(url, demo, 'stack-token', env)).toBe(want);
  });
});
