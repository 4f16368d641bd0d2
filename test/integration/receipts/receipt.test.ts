/**
 * Receipts on the real local stack: a finished `checkout@1` job (DynamoDB Local, real Chromium,
 * the real ASL, the demo shop) gets its signed receipt from the API; `belay receipt verify` (the
 * command a person types) checks it offline with the file alone, and with the public key given.
 * The receipt holds `place-order`'s committing request. An entry changed in DynamoDB Local makes
 * the next receipt fail, naming that entry; a receipt file edited after it was signed fails too.
 */
import { spawn } from 'node:child_process';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobPk } from '../../../lambdas/lib/ledger/keys.ts';
import type { Receipt } from '../../../lambdas/lib/receipts/format.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { TENANT } from '../../support/fixtures.ts';
import { runToSuccess, submitCheckout } from '../../support/jobs.ts';
import { call } from '../api/support/http.ts';

const getEngine = useEngineStack();
const JOB = 'receipt-checkout';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belay-receipt-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  out: string;
  err: string;
}

/** `belay` as a person runs it, with no URL, key or stack: verifying needs none. */
function belay(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['tools/cli/bin/belay.js', ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        XDG_CONFIG_HOME: dir,
        BELAY_LOCAL_STATE: join(dir, 'none.json'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

async function fetchReceipt(file: string): Promise<Receipt> {
  const { stack } = getEngine();
  const res = await call(stack.apiUrl as string, 'GET', `/jobs/${JOB}/receipt`, { key: stack.demoApiKey });
  expect(res.status, res.text).toBe(200);
  await writeFile(file, res.text, 'utf8');
  return res.json as Receipt;
}

describe('Receipts: a finished demo checkout', () => {
  it('verifies offline, holds place-order’s committing request, and names an entry changed in the table', {
    timeout: 300_000,
  }, async () => {
    const engine = getEngine();
    await submitCheckout(engine, { jobId: JOB });
    await runToSuccess(engine, JOB, { timeoutMs: 240_000 });

    // The receipt, as the API gives it and the CLI checks it with the file alone.
    const file = join(dir, 'receipt.json');
    const receipt = await fetchReceipt(file);
    const verified = await belay(['receipt', 'verify', file]);
    expect(verified.code, verified.out + verified.err).toBe(0);
    expect(verified.out).toContain('VALID');
    expect(receipt.job).toMatchObject({
      jobId: JOB,
      tenantId: TENANT,
      playbook: 'checkout@1',
      status: 'SUCCEEDED',
    });
    expect(receipt.chain.unchained).toEqual([]);
    expect(receipt.entries.length).toBe(receipt.chain.length);
    expect(receipt.job.chainHead).toBe(receipt.entries.at(-1)?.hash);

    // The write: the shop's POST /orders that placed the order (a 303 to its page), its evidence, its screenshot hash.
    const write = receipt.writes.find((w) => w.step === 'place-order');
    expect(write).toMatchObject({ settledBy: 'request', evidence: { orderId: expect.any(String) } });
    expect(write?.requests).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/orders$/),
        status: 303,
        location: expect.stringMatching(/\/orders\/[^/?]+$/),
        at: expect.any(String),
      }),
    ]);
    expect(write?.screenshot?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(verified.out).toMatch(/place-order .*settled by request/);
    expect(verified.out).toMatch(/committed by POST http:\/\/127\.0\.0\.1:\d+\/orders -> 303/);

    // With the key the auditor trusts (the local stack's key file's public half): valid; another key: not.
    const pem = createPublicKey(
      createPrivateKey(await readFile(join(engine.dataDir, 'receipt-key.pem'), 'utf8')),
    )
      .export({ type: 'spki', format: 'pem' })
      .toString();
    await writeFile(join(dir, 'trusted.pem'), pem);
    const trusted = await belay(['receipt', 'verify', file, '--key', join(dir, 'trusted.pem')]);
    expect(trusted.code, trusted.out).toBe(0);
    expect(trusted.out).toContain('(the key given)');
    expect((await belay(['receipt', 'verify', file, '--key', join(dir, 'missing.pem')])).code).toBe(2);
    expect((await belay(['receipt', 'verify', join(dir, 'missing.json')])).code).toBe(2);
    // A receipt fetched again keeps every entry the first showed, at its place, with its hash.
    const again = join(dir, 'again.json');
    await fetchReceipt(again);
    const kept = await belay(['receipt', 'verify', again, '--since', file]);
    expect(kept.code, kept.out).toBe(0);

    // The receipt file edited after it was signed: invalid.
    const edited = structuredClone(receipt);
    (edited.writes[0] as { evidence: Record<string, unknown> }).evidence.orderId = 'O-FORGED';
    await writeFile(join(dir, 'edited.json'), JSON.stringify(edited));
    const editedRun = await belay(['receipt', 'verify', join(dir, 'edited.json')]);
    expect(editedRun.code).toBe(1);
    expect(editedRun.out).toContain('the signature does not match the receipt');

    // An entry changed in DynamoDB Local: the next receipt fails to verify and names it.
    const completion = receipt.entries.find(
      (e) => e.type === 'step-completed' && e.content.step === 'place-order',
    );
    if (!completion) throw new Error('no place-order completion in the receipt');
    await engine.stack.doc.send(
      new UpdateCommand({
        TableName: engine.stack.tableName,
        Key: { pk: jobPk(TENANT, JOB), sk: `E#${completion.entryId}` },
        UpdateExpression: 'SET evidence.totalPence = :t',
        ExpressionAttributeValues: { ':t': 1 },
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
    const after = join(dir, 'after.json');
    await fetchReceipt(after);
    const broken = await belay(['receipt', 'verify', after]);
    expect(broken.code, broken.out).toBe(1);
    expect(broken.out).toContain('INVALID');
    expect(broken.out).toContain(
      `entry ${completion.entryId} (step-completed place-order): its content does not match its hash`,
    );
  });
});
