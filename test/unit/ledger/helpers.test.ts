import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, requestHash } from '../../../lambdas/lib/ledger/canonical.ts';
import { normalizeCost } from '../../../lambdas/lib/ledger/entries.ts';
import {
  createFileEvidenceStore,
  type EvidenceStore,
  InvalidInputError,
} from '../../../lambdas/lib/ledger/index.ts';
import { createEntryIdFactory } from '../../../lambdas/lib/ledger/keys.ts';
import { jobRequest } from '../../support/ledger.ts';

describe('Function: requestHash', () => {
  it('is the same for the same request whatever the key order or approvals order', () => {
    const a = jobRequest({ approvals: ['b', 'a'], inputs: { x: 1, y: { p: 1, q: 2 } } });
    const b = { ...jobRequest(), inputs: { y: { q: 2, p: 1 }, x: 1 }, approvals: ['a', 'b'] };
    expect(requestHash(a)).toBe(requestHash(b));
    expect(requestHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['inputs', { inputs: { sku: 'other' } }],
    ['playbook', { playbook: 'checkout@2' }],
    ['accounts', { accounts: { shop: 'acct-2' } }],
    ['retryBudget', { retryBudget: 4 }],
    ['deadline', { deadline: '2030-01-01T00:00:00.000Z' }],
  ])('differs when %s differs', (_name, change) => {
    expect(requestHash(jobRequest(change))).not.toBe(requestHash(jobRequest()));
  });

  it('drops undefined members like JSON does', () => {
    expect(canonicalJson({ b: 1, a: undefined, c: [1, { z: 1, y: 2 }] })).toBe(
      '{"b":1,"c":[1,{"y":2,"z":1}]}',
    );
  });
});

describe('Function: createEntryIdFactory', () => {
  it('makes unique ids that sort in creation order, even when the clock stands still or steps back', () => {
    const times = [5000, 5000, 5000, 4000, 6000, 6000];
    let i = 0;
    const next = createEntryIdFactory(() => new Date(1_700_000_000_000 + (times[i++] ?? 0)));
    const ids = times.map(() => next());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('Function: normalizeCost', () => {
  it('fills missing components with zero', () => {
    expect(normalizeCost({ lambdaMs: 5 })).toMatchObject({ lambdaMs: 5, browserSeconds: 0, modelTokens: 0 });
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s', (v) => {
    expect(() => normalizeCost({ proxyBytes: v })).toThrow(InvalidInputError);
  });
});

describe('Function: createFileEvidenceStore', () => {
  let dir: string;
  let store: EvidenceStore;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'belay-store-'));
    store = createFileEvidenceStore(dir);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips a body by the reference it returns', async () => {
    const ref = await store.put('t1/j1/2026-01-01T00:00:00.000Z-0000-ab.json', '{"a":1}');
    expect(ref).toBe('file:t1/j1/2026-01-01T00:00:00.000Z-0000-ab.json');
    expect(await store.get(ref)).toBe('{"a":1}');
  });

  it.each(['../outside.json', 't1/../../x.json', '/etc/passwd', 't1//x.json'])(
    'refuses the key %s',
    async (key) => {
      await expect(store.put(key, 'x')).rejects.toBeInstanceOf(InvalidInputError);
    },
  );

  it.each(['file:../x.json', 's3://bucket/x', 'file:t1/../../x'])('refuses the reference %s', async (ref) => {
    await expect(store.get(ref)).rejects.toBeInstanceOf(InvalidInputError);
  });
});
