import { beforeAll, describe, expect, it } from 'vitest';
import { meterInvocation, TRANSITIONS_PER_INVOCATION } from '../../../lambdas/lib/engine/metering.ts';
import { Relayed } from '../../../lambdas/lib/engine/relay.ts';
import type { EngineDeps } from '../../../lambdas/lib/engine/types.ts';
import { createLedger, type Ledger } from '../../../lambdas/lib/ledger/index.ts';
import { createLogger } from '../../../lambdas/lib/logger.ts';
import { useDynamoDb } from '../../support/dynamodb.ts';
import { jobRequest, newId } from '../../support/ledger.ts';

const ddb = useDynamoDb();
const tenantId = newId('tenant');
let ledger: Ledger;
let now = 1_000_000;
const warnings: string[] = [];

beforeAll(() => {
  ledger = createLedger({ doc: ddb.doc(), tableName: ddb.tableName() });
});

/** Only what metering touches: the ledger, a clock the test moves, a logger that keeps warnings. */
function deps(): EngineDeps {
  return {
    ledger,
    clock: () => new Date(now),
    log: createLogger({ service: 'test', sink: (line, level) => level === 'warn' && warnings.push(line) }),
  } as unknown as EngineDeps;
}

async function newJob(): Promise<string> {
  const jobId = newId('job');
  await ledger.createJob(tenantId, jobId, jobRequest(), 3);
  return jobId;
}

describe('Function: meterInvocation', () => {
  it('records an invocation that wrote no entry as an `invocation` entry with its time, outcome and cost', async () => {
    const jobId = await newJob();
    const out = await meterInvocation(deps(), 'Start', { tenantId, jobId }, async () => {
      now += 250;
      return { outcome: 'queued', position: 2 };
    });
    expect(out).toEqual({ outcome: 'queued', position: 2 });
    const { job, entries } = await ledger.readJob(tenantId, jobId);
    const recorded = entries.filter((e) => e.type === 'invocation');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.detail).toEqual({ function: 'Start', outcome: 'queued' });
    expect(recorded[0]?.cost).toMatchObject({
      lambdaInvocations: 1,
      lambdaMs: 250,
      // Start, StartOutcome, and the WaitForCapacity a queued job goes through.
      stateTransitions: TRANSITIONS_PER_INVOCATION.Start + 1,
      dynamoWrites: 2,
    });
    // The job's totals are the sum of its entries.
    expect(job.cost.lambdaInvocations).toBe(1);
    expect(job.cost.lambdaMs).toBe(250);
  });

  it("does not record twice an invocation the core's own entry records, and fills in its time and states", async () => {
    const jobId = await newJob();
    await meterInvocation(deps(), 'Reauthenticate', { tenantId, jobId }, async (d) => {
      now += 40;
      await d.ledger.append(tenantId, jobId, {
        type: 'reauth',
        cost: { lambdaInvocations: 1, dynamoWrites: 1 },
      });
      now += 60;
      return { outcome: 'signed_in' };
    });
    const { job, entries } = await ledger.readJob(tenantId, jobId);
    expect(entries.filter((e) => e.type === 'invocation')).toHaveLength(0);
    const reauth = entries.find((e) => e.type === 'reauth');
    expect(reauth?.cost).toMatchObject({
      lambdaInvocations: 1,
      lambdaMs: 40,
      stateTransitions: TRANSITIONS_PER_INVOCATION.Reauthenticate,
      dynamoWrites: 1,
    });
    expect(job.cost.lambdaInvocations).toBe(1);
  });

  it('records an invocation whose entry write failed, or that threw, and passes the error on', async () => {
    const jobId = await newJob();
    class StepBrokeError extends Error {
      override name = 'StepBrokeError';
    }
    await expect(
      meterInvocation(deps(), 'RunStep', { tenantId, jobId }, async (d) => {
        // A completion on a stale version fails: it recorded nothing.
        await d.ledger
          .completeStep({
            tenantId,
            jobId,
            expectedVersion: 999,
            stepIndex: 0,
            step: 's0',
            attempt: 1,
            evidence: {},
            cost: { lambdaInvocations: 1, dynamoWrites: 2 },
          })
          .catch(() => undefined);
        now += 10;
        throw new StepBrokeError('the page broke');
      }),
    ).rejects.toThrow(StepBrokeError);
    const { entries } = await ledger.readJob(tenantId, jobId);
    const recorded = entries.filter((e) => e.type === 'invocation');
    expect(recorded.map((e) => e.detail)).toEqual([{ function: 'RunStep', outcome: 'error:StepBrokeError' }]);
    expect(entries.filter((e) => e.type === 'step-completed')).toHaveLength(0);
  });

  it.each([
    ['RunStep', { tenantId: 't', jobId: 'j' }, 1],
    ['RunNextStep', { tenantId: 't', jobId: 'j', previous: { outcome: 'completed' } }, 2],
  ] as const)(
    'counts the states of a checkpoint written from the %s state (%#: the task, and Route after RunNextStep)',
    async (_state, event, states) => {
      const jobId = await newJob();
      const queued = await ledger.getJob(tenantId, jobId);
      const running = await ledger.transition(tenantId, jobId, 'RUNNING', {
        expectedVersion: queued.version,
      });
      await meterInvocation(deps(), 'RunStep', { ...event, tenantId, jobId }, async (d) => {
        now += 30;
        await d.ledger.completeStep({
          tenantId,
          jobId,
          expectedVersion: running.version,
          stepIndex: 0,
          step: 's0',
          attempt: 1,
          evidence: { ok: true },
          cost: { lambdaInvocations: 1, dynamoWrites: 2 },
        });
        return { outcome: 'completed' };
      });
      const { entries } = await ledger.readJob(tenantId, jobId);
      expect(entries.find((e) => e.type === 'step-completed')?.cost.stateTransitions).toBe(states);
      expect(entries.filter((e) => e.type === 'invocation')).toHaveLength(0);
    },
  );

  it('records a relayed result as a `relayed` invocation (RunNextStep and Route), without its screenshot', async () => {
    const jobId = await newJob();
    const previous = {
      outcome: 'uncertain',
      step: 's0',
      detail: 'no response',
      screenshot: {
        key: 'k',
        sha256: 'x',
        bytes: 1,
        contentType: 'image/jpeg',
        reason: 'before-review',
        masked: 0,
      },
    };
    const out = await meterInvocation(
      deps(),
      'RunStep',
      { tenantId, jobId, previous } as never,
      async () => new Relayed(previous),
    );
    expect(out).toBeInstanceOf(Relayed);
    const { entries } = await ledger.readJob(tenantId, jobId);
    expect(entries.map((e) => e.type)).toEqual(['job-created', 'invocation']);
    const recorded = entries[1];
    expect(recorded?.detail).toEqual({ function: 'RunStep', outcome: 'relayed' });
    expect(recorded?.screenshot).toBeUndefined();
    expect(recorded?.cost).toMatchObject({ lambdaInvocations: 1, stateTransitions: 2, dynamoWrites: 2 });
  });

  it('never fails the invocation for metering: a job that is not there is logged and the result returned', async () => {
    warnings.length = 0;
    const out = await meterInvocation(deps(), 'Start', { tenantId, jobId: newId('missing') }, async () => ({
      outcome: 'stopped',
    }));
    expect(out).toEqual({ outcome: 'stopped' });
    expect(warnings.join('\n')).toMatch(/invocation not recorded in the ledger/);
    expect(warnings.join('\n')).toMatch(/JobNotFoundError/);
  });
});
