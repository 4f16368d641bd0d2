/**
 * The local stack holds every function to its IAM policy in the synthesized template, as AWS
 * does: a template whose RunStep may not UpdateItem fails the job with AccessDenied named in
 * its failure, and the refusal is the one AWS sends. (The unmodified template runs the demo
 * jobs to SUCCEEDED: `engine-happy.test.ts`, and every engine test, run with it.)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { synthesizedTemplate } from '../../../local/iam/index.ts';
import { type EngineStack, startEngineStack, stopEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_STEPS, TENANT } from '../../support/fixtures.ts';
import { diagnose, statusIs, submitCheckout, waitForJob } from '../../support/jobs.ts';
import { templateWithout } from '../../support/templates.ts';

let dir = '';
let engine: EngineStack | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'belay-iam-'));
  const template = templateWithout(await synthesizedTemplate(), dir, 'RunStep', 'dynamodb:UpdateItem');
  engine = await startEngineStack({ template });
}, 240_000);

afterAll(async () => {
  if (engine) await stopEngineStack(engine);
  await rm(dir, { recursive: true, force: true });
}, 120_000);

describe('Local stack: IAM from the template', () => {
  it('fails a job whose RunStep may not UpdateItem, with AccessDenied named in its failure', {
    timeout: 180_000,
  }, async () => {
    const e = engine as EngineStack;
    const jobId = 'iam-no-update';
    await submitCheckout(e, { jobId });
    const { job, entries } = await waitForJob(e, jobId, statusIs('FAILED'), {
      timeoutMs: 150_000,
      what: 'FAILED',
    }).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await diagnose(e, jobId)}`);
    });
    expect(job.failure?.message).toContain('AccessDeniedException');
    expect(job.failure?.message).toContain('is not authorized to perform: dynamodb:UpdateItem');
    expect(job.failure?.message).toMatch(/assumed-role\/Belay-RunStepRole[0-9A-F]{8}\/belay-run-step/);
    // Nothing was done past the first step's attempt: its checkpoint is an UpdateItem.
    expect(entries.filter((x) => x.type === 'step-completed')).toEqual([]);
    expect(CHECKOUT_STEPS[job.nextStep]).toBe('open-shop');
    const refused = e.stack.iam.refusals.filter((r) => r.functionName === 'belay-run-step');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.action === 'dynamodb:UpdateItem')).toBe(true);
    expect(refused[0]?.resource).toBe(`arn:aws:dynamodb:us-east-1:000000000000:table/${e.stack.tableName}`);
    // The other functions ran under their own, unchanged policies.
    expect(e.stack.iam.refusals.filter((r) => r.functionName !== 'belay-run-step')).toEqual([]);
    expect(job.tenantId).toBe(TENANT);
  });
});
