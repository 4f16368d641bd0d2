import { describe, expect, it } from 'vitest';
import {
  contentHash,
  entryContent,
  leafSalt,
  linkEntry,
  linkHash,
  pointer,
  sealEntry,
} from '../../../lambdas/lib/ledger/chain.ts';
import { type JobItemUpdate, withChainHead } from '../../../lambdas/lib/ledger/chain-write.ts';
import { type LedgerEntry, ZERO_COST } from '../../../lambdas/lib/ledger/types.ts';

const entry = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  tenantId: 't1',
  jobId: 'j1',
  entryId: '2030-01-01T00:00:00.000Z-0000-aaaaaaaa',
  type: 'step-completed',
  step: 'place-order',
  stepIndex: 3,
  evidence: { orderId: 'O-1', totalPence: 1299 },
  detail: { writeGuard: { commits: [{ method: 'POST', url: 'http://127.0.0.1/orders', status: 303 }] } },
  cost: { ...ZERO_COST, dynamoWrites: 2 },
  at: '2030-01-01T00:00:00.000Z',
  ...over,
});

describe('Function: sealEntry', () => {
  it('hashes the content whatever its key order, and not the chain attributes or the TTL', () => {
    const sealed = sealEntry(entry(), undefined);
    expect(sealed.hashSalt).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(sealed.contentHash).toMatch(/^[0-9a-f]{64}$/);
    const reordered = Object.fromEntries(Object.entries(sealed).reverse()) as unknown as LedgerEntry;
    const stamped = { ...reordered, expiresAt: 1, hash: 'x', prevHash: 'y' } as LedgerEntry;
    expect(contentHash(entryContent(stamped, undefined), sealed.hashSalt as string)).toBe(sealed.contentHash);
  });

  it.each([
    ['evidence', { evidence: { orderId: 'O-2', totalPence: 1299 } }],
    ['a number', { stepIndex: 4 }],
    [
      'a nested value',
      {
        detail: {
          writeGuard: { commits: [{ method: 'POST', url: 'http://127.0.0.1/orders', status: 500 }] },
        },
      },
    ],
    ['the time', { at: '2030-01-01T00:00:00.001Z' }],
    ['a type (number for string)', { evidence: { orderId: 'O-1', totalPence: '1299' } as never }],
  ])('gives another content hash when %s changes', (_what, change) => {
    const sealed = sealEntry(entry(), undefined);
    const changed = { ...sealed, ...change } as LedgerEntry;
    expect(contentHash(entryContent(changed, undefined), sealed.hashSalt as string)).not.toBe(
      sealed.contentHash,
    );
  });

  it('covers evidence kept in the evidence store as if it were inline', () => {
    const inline = sealEntry(entry({ hashSalt: 's'.repeat(22) }), undefined);
    const { evidence, ...rest } = entry({ hashSalt: 's'.repeat(22) });
    const offloaded = sealEntry({ ...rest, evidenceRef: 'file:t1/j1/e.json' }, evidence);
    expect(offloaded.contentHash).toBe(inline.contentHash);
    expect(sealEntry({ ...rest, evidenceRef: 'file:t1/j1/e.json' }, { orderId: 'O-9' }).contentHash).not.toBe(
      inline.contentHash,
    );
  });

  it('salts every value apart, so one value shown tells nothing of another', () => {
    const salt = sealEntry(entry(), undefined).hashSalt as string;
    expect(leafSalt(salt, '/evidence/orderId')).not.toBe(leafSalt(salt, '/evidence/totalPence'));
    expect(pointer(['detail', 'a/b', 'c~d', 0])).toBe('/detail/a~1b/c~0d/0');
  });
});

describe('Function: linkEntry', () => {
  it('links each entry to the one before it', () => {
    const first = linkEntry(sealEntry(entry({ type: 'job-created' }), undefined), undefined);
    const second = linkEntry(sealEntry(entry(), undefined), first.hash);
    expect(first.prevHash).toBeUndefined();
    expect(first.hash).toBe(linkHash(undefined, first.contentHash as string));
    expect(second.prevHash).toBe(first.hash);
    expect(second.hash).toBe(linkHash(first.hash, second.contentHash as string));
    expect(linkHash('a'.repeat(64), second.contentHash as string)).not.toBe(second.hash);
  });

  it('refuses an entry that was not sealed', () => {
    expect(() => linkEntry(entry(), undefined)).toThrow(/not sealed/);
  });
});

describe('Function: withChainHead', () => {
  it('adds the head to the SET clause and the condition', () => {
    const update = withChainHead(
      {
        UpdateExpression: 'SET #a = :v0 REMOVE #b',
        ConditionExpression: '(#version = :v1)',
        ExpressionAttributeNames: { '#a': 'a', '#b': 'b', '#version': 'version' },
        ExpressionAttributeValues: { ':v0': 1, ':v1': 7 },
      },
      'h'.repeat(64),
      'n'.repeat(64),
    );
    expect(update.UpdateExpression).toBe('SET #chainHead = :chainNext, #a = :v0 REMOVE #b');
    expect(update.ConditionExpression).toBe('(#version = :v1) AND (#chainHead = :chainPrev)');
    expect(update.ExpressionAttributeValues).toMatchObject({
      ':chainNext': 'n'.repeat(64),
      ':chainPrev': 'h'.repeat(64),
    });
  });

  it('starts a chain on a job that has none, on condition it still has none', () => {
    const empty: JobItemUpdate = { UpdateExpression: '', ExpressionAttributeNames: {} };
    const update = withChainHead(empty, undefined, 'n'.repeat(64));
    expect(update.UpdateExpression).toBe('SET #chainHead = :chainNext');
    expect(update.ConditionExpression).toBe('attribute_not_exists(#chainHead)');
    expect(update.ExpressionAttributeValues).not.toHaveProperty(':chainPrev');
  });
});
