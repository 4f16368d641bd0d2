import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { call } from './support/http.ts';
import { TENANT_A, useApiStack } from './support/stack.ts';

const stack = useApiStack({ unlimited: true });

const VALID = {
  jobId: 'fuzz-ok',
  playbook: 'test-order@1',
  inputs: { sku: 'MUG-001', quantity: 2 },
  accounts: { shop: 'acct_acme_shop' },
};
const FIELDS = ['jobId', 'playbook', 'inputs', 'accounts', 'approvals', 'retryBudget', 'deadline'];
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const notIn = (values: readonly unknown[]) => (v: unknown) => !values.includes(v);
const nonInteger = fc.double().filter((x) => !Number.isInteger(x));
const key = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => k !== '__proto__');

/** A value that is wrong for each field of a submission, whatever the rest of the body. */
const badValue: Record<string, fc.Arbitrary<unknown>> = {
  jobId: fc.oneof(
    fc.string().filter((s) => !ID.test(s)),
    fc.integer(),
    fc.constant(null),
    fc.array(fc.string()),
  ),
  playbook: fc.oneof(
    fc.string().filter(notIn([VALID.playbook])),
    fc.integer(),
    fc.constant(null),
    fc.object(),
  ),
  inputs: fc.oneof(
    fc.constant(null),
    fc.string(),
    fc.integer(),
    fc.array(fc.jsonValue()),
    fc.record({
      sku: fc.string().filter((s) => !/^[A-Z]{3}-\d{3}$/.test(s)),
      quantity: fc.integer({ min: 1, max: 9 }),
    }),
    fc.record({
      sku: fc.constant('MUG-001'),
      quantity: fc.oneof(fc.integer({ min: 10 }), fc.integer({ max: 0 }), nonInteger),
    }),
    fc.record({ sku: fc.constant('MUG-001') }),
    key
      .filter(notIn(['sku', 'quantity', 'note']))
      .chain((k) => fc.jsonValue().map((v) => ({ sku: 'MUG-001', quantity: 1, [k]: v }))),
  ),
  accounts: fc.oneof(
    fc.constant(null),
    fc.string(),
    fc.array(fc.string()),
    fc.record({ shop: fc.string().filter(notIn(['acct_acme_shop', 'acct_acme_shop2'])) }),
    fc.record({ shop: fc.oneof(fc.integer(), fc.constant(null), fc.boolean()) }),
    key.filter(notIn(['shop'])).map((k) => ({ shop: 'acct_acme_shop', [k]: 'acct_acme_crm' })),
  ),
  approvals: fc.oneof(
    fc.string(),
    fc.integer(),
    fc.constant(null),
    fc.array(fc.string().filter(notIn(['open-cart', 'place-order'])), { minLength: 1, maxLength: 3 }),
    fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
  ),
  retryBudget: fc.oneof(
    fc.integer({ min: 21 }),
    fc.integer({ max: -1 }),
    nonInteger,
    fc.string(),
    fc.boolean(),
  ),
  deadline: fc.oneof(
    fc.string().filter((s) => !/^\d{4}-/.test(s)),
    fc
      .date({ min: new Date('1990-01-01'), max: new Date('2020-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString()),
    fc.integer(),
  ),
};

/** Bodies that must all be refused with a 4xx. */
const malformedBody: fc.Arbitrary<string> = fc.oneof(
  // Not JSON at all.
  fc.string().filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
  // JSON, but not an object.
  fc
    .oneof(fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue()))
    .map((v) => JSON.stringify(v)),
  // A required field missing.
  fc.constantFrom('playbook', 'inputs').map((field) => {
    const body: Record<string, unknown> = { ...VALID };
    delete body[field];
    return JSON.stringify(body);
  }),
  // One field wrong.
  fc
    .constantFrom(...FIELDS)
    .chain((field) =>
      (badValue[field] as fc.Arbitrary<unknown>).map((v) => JSON.stringify({ ...VALID, [field]: v })),
    ),
  // An unknown field (the tenant, for one, never comes from the body).
  key.filter(notIn(FIELDS)).chain((k) => fc.jsonValue().map((v) => JSON.stringify({ ...VALID, [k]: v }))),
  // Several things wrong at once.
  fc
    .tuple(fc.constantFrom(...FIELDS), fc.constantFrom(...FIELDS))
    .chain(([f1, f2]) =>
      fc
        .tuple(badValue[f1] as fc.Arbitrary<unknown>, badValue[f2] as fc.Arbitrary<unknown>)
        .map(([v1, v2]) => JSON.stringify({ ...VALID, [f1]: v1, [f2]: v2 })),
    ),
);

async function countItems(): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await stack.ddb
      .doc()
      .send(
        new ScanCommand({ TableName: stack.ddb.tableName(), Select: 'COUNT', ExclusiveStartKey: startKey }),
      );
    count += out.Count ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return count;
}

describe('POST /jobs with malformed bodies (property)', () => {
  it('answers every one of 1,000 malformed bodies with a 4xx and writes nothing, starts nothing', async () => {
    const submit = (raw: string) => call(stack.url(), 'POST', '/jobs', { key: stack.key('a'), raw });
    const before = await countItems();
    const statuses = new Map<number, number>();

    await fc.assert(
      fc.asyncProperty(malformedBody, async (raw) => {
        const res = await submit(raw);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, raw.slice(0, 300)).toBeGreaterThanOrEqual(400);
        expect(res.status, raw.slice(0, 300)).toBeLessThan(500);
        expect(typeof res.json?.error?.code).toBe('string');
        expect(typeof res.json?.error?.message).toBe('string');
      }),
      { numRuns: 1000, seed: 20260524 },
    );

    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1000);
    expect(statuses.get(400)).toBeGreaterThan(0);
    expect(statuses.get(422)).toBeGreaterThan(0);
    expect(await countItems()).toBe(before);
    expect(stack.sfn().listExecutions()).toHaveLength(0);

    // The control: the valid body is accepted, and the count sees its writes.
    const ok = await submit(JSON.stringify(VALID));
    expect(ok.status).toBe(202);
    expect(await countItems()).toBeGreaterThan(before);
    expect(stack.sfn().listExecutions()).toHaveLength(1);
    expect((await stack.deps().engine.ledger.getJob(TENANT_A, 'fuzz-ok')).status).toBeDefined();
  });
});
