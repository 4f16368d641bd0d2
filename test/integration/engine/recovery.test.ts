/**
 * Executions that die outside the handlers (here: an operator's StopExecution, and a job
 * whose execution never started) are recovered the way AWS users rely on: the rule on the
 * machine's status changes invokes the recovery function, which releases the job's lease and
 * sessions and resumes it from its checkpoint in a new execution (at most
 * BELAY_MAX_RECOVERIES times, then the job fails with the cause); the scheduled sweep finds
 * an unfinished job with no execution. The stack does not resume jobs itself here.
 */
import { describe, expect, it } from 'vitest';
import { generationOf } from '../../../lambdas/lib/engine/executions.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { CHECKOUT_INPUTS, sleep, TENANT } from '../../support/fixtures.ts';
import {
  executionsOf,
  runToSuccess,
  statusIs,
  submitCheckout,
  waitForJob,
  waitingAt,
} from '../../support/jobs.ts';
import { keyOf, ofType } from '../../support/records.ts';

const engine = useEngineStack({
  resume: false,
  env: { BELAY_MAX_RECOVERIES: '1', BELAY_SWEEP_GRACE_SECONDS: '0' },
});

/** Stops the job's running execution as an operator would, and returns the wait's token it held. */
async function stopRunningExecution(jobId: string): Promise<{ token: string | undefined; name: string }> {
  const e = engine();
  const running = executionsOf(e, jobId).find((x) => x.status === 'RUNNING');
  if (!running) throw new Error(`${jobId} has no running execution`);
  const { job } = await e.ledger.readJob(TENANT, jobId);
  e.stack.sfn.stopExecution(running.executionArn, { error: 'Operator', cause: 'stopped by hand' });
  return { token: job.wait?.taskToken, name: running.name };
}

describe('Engine: recovery of dead executions', () => {
  it('resumes a job whose execution was stopped, in a new execution, and finishes it with one order', {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    const jobId = 'recover-stopped';
    await submitCheckout(e, { jobId });
    await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 150_000 });
    const dead = await stopRunningExecution(jobId);

    // The recovery function (the rule's target) started generation 1, which re-armed the wait.
    const { job, entries } = await waitForJob(
      e,
      jobId,
      ({ job }) =>
        generationOf(job.executionName ?? '') === 1 &&
        job.wait !== undefined &&
        job.wait.taskToken !== dead.token,
      { timeoutMs: 60_000, what: 'a new execution waiting for the approval' },
    );
    const [recovered] = ofType(entries, 'recovered');
    expect(recovered?.detail).toMatchObject({
      execution: dead.name,
      status: 'ABORTED',
      error: 'Operator',
      recovery: 1,
    });
    expect(job.status).toBe('WAITING_APPROVAL');
    // What the dead execution held was let go before the new one started.
    expect(ofType(entries, 'session-ended').length).toBeGreaterThan(0);

    const view = await runToSuccess(e, jobId);
    expect(view.job.status).toBe('SUCCEEDED');
    expect((await e.shop.writes()).countsByKey[await keyOf(e, jobId, 'place-order')]).toBe(1);
    expect(executionsOf(e, jobId).map((x) => x.status)).toEqual(['SUCCEEDED', 'ABORTED']);
  });

  it('fails the job with the cause when its executions keep dying (BELAY_MAX_RECOVERIES)', {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    const jobId = 'recover-bounded';
    await submitCheckout(e, { jobId });
    await waitForJob(e, jobId, waitingAt('approval', 'place-order'), { timeoutMs: 150_000 });
    const first = await stopRunningExecution(jobId);
    await waitForJob(
      e,
      jobId,
      ({ job }) => generationOf(job.executionName ?? '') === 1 && job.wait?.taskToken !== first.token,
      { timeoutMs: 60_000, what: 'the first recovery' },
    );
    await stopRunningExecution(jobId);

    const failed = await waitForJob(e, jobId, statusIs('FAILED'), { timeoutMs: 60_000, what: 'FAILED' });
    // The failure is written first (on the version the recovery decided on), then the call that
    // wrote it releases what the dead execution held: the sessions' ends follow the failure.
    let { job } = failed;
    for (let until = Date.now() + 30_000; Date.now() < until; ) {
      if (Object.values(job.sessions).every((s) => s.endedAt !== undefined)) break;
      await sleep(200);
      ({ job } = await e.ledger.readJob(TENANT, jobId));
    }
    expect(job.failure?.reason).toBe('execution-lost');
    expect(job.failure?.message).toContain('ABORTED');
    expect(job.failure?.message).toContain('after 1 recoveries');
    expect(Object.values(job.sessions).every((s) => s.endedAt !== undefined)).toBe(true);
    expect(executionsOf(e, jobId).filter((x) => x.status === 'RUNNING')).toEqual([]);
  });

  it('sweeps up a job whose execution never started, and runs it', { timeout: 240_000 }, async () => {
    const e = engine();
    const jobId = 'recover-never-started';
    // Created, but its start was lost (as when StartExecution failed after the job was written).
    await e.ledger.createJob(
      TENANT,
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
    const sweep = e.stack.events.rules().find((r) => r.everyMs !== undefined);
    expect(sweep?.targets.map((t) => t.kind)).toEqual(['lambda']);
    const [delivery] = await e.stack.events.triggerSchedule(sweep?.name ?? '');
    expect(delivery?.ok).toBe(true);

    const view = await runToSuccess(e, jobId);
    expect(ofType(view.entries, 'recovered')[0]?.detail).toMatchObject({ status: 'MISSING', recovery: 1 });
    expect((await e.shop.writes()).countsByKey[await keyOf(e, jobId, 'place-order')]).toBe(1);
  });
});
