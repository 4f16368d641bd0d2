/**
 * An agent step on the local stack (the real ASL, RunStep in its esbuild bundle, DynamoDB
 * Local, Chromium): the step worker SIGKILLed right after each recorded action resumes with no
 * model call for a recorded action (each action is chosen, so recorded, once) and the CRM gets
 * exactly one committed change; killed after the submitting click, the probe settles the write,
 * and for the declarative form (crm-contact-decl@1) its agent probe, each answer in the ledger.
 * A 13-digit phone number (which looks like a card number) is saved as given, in one pass.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { localFunctionArn } from '../../../local/stack.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { runToSuccess, submitContactAgent } from '../../support/jobs.ts';

// No simulated latency: the test measures calls, not time.
const engine = useEngineStack({ env: { BELAY_AGENT_LOCAL_LATENCY_MS: '0' } });
const AGENT_STEP = 1;

function submitAgentJob(jobId: string, customerId: string, playbook?: string): Promise<unknown> {
  return submitContactAgent(engine(), {
    jobId,
    customerId,
    contactName: `Agent ${jobId}`,
    model: 'local',
    ...(playbook ? { playbook } : {}),
  });
}

function armActionKill(jobId: string, point: 'action-recorded' | 'action-executed', action: number): void {
  engine().stack.lambdas.arm({
    functionName: localFunctionArn('RunStep'),
    point,
    match: { jobId, stepIndex: AGENT_STEP, action },
    times: 1,
  });
}

const ofStep = (entries: readonly LedgerEntry[], type: string) =>
  entries.filter((e) => e.step === 'update-contact' && e.type === type);

const fired = (jobId: string) =>
  engine()
    .faultPoints.filter((p) => p.fired && p.info.jobId === jobId)
    .map((p) => [p.point, p.info.action]);

describe('Engine: an agent step whose worker is killed after each recorded action', () => {
  it('chooses each action once (no model call on replay) and commits one change', {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    const jobId = 'agent-kills';
    for (const n of [1, 2, 3, 4]) armActionKill(jobId, 'action-recorded', n);
    await submitAgentJob(jobId, 'C-1003');
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 220_000 });

    expect(job.status).toBe('SUCCEEDED');
    expect(fired(jobId)).toEqual([1, 2, 3, 4].map((n) => ['action-recorded', n]));
    // Four decisions in all, each recorded once: a replayed action cost no model call.
    const chosen = ofStep(entries, 'action-chosen');
    expect(chosen.map((c) => c.detail?.describe)).toEqual([
      `fill textbox "Contact name" = "Agent ${jobId}"`,
      'fill textbox "Phone" = "+44 117 496 0999"',
      'click button "Save record"',
      'done: the form was filled and submitted',
    ]);
    expect(chosen.map((c) => c.detail?.n)).toEqual([1, 2, 3, 4]);
    expect(chosen.every((c) => c.detail?.model === 'local')).toBe(true);
    // Each action was recorded in its own attempt (one per kill), before it ran.
    expect(new Set(chosen.map((c) => c.attempt)).size).toBe(4);
    const writes = await e.crm.writes();
    expect(writes.count).toBe(1);
    expect(ofStep(entries, 'step-completed')).toHaveLength(1);
  });

  it('killed after the submitting click ran, the probe finds the change: it is not made again', {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    const jobId = 'agent-kill-after-click';
    const before = (await e.crm.writes()).count;
    armActionKill(jobId, 'action-executed', 3);
    await submitAgentJob(jobId, 'C-1002');
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 220_000 });
    expect(job.status).toBe('SUCCEEDED');
    expect(fired(jobId)).toEqual([['action-executed', 3]]);
    expect(ofStep(entries, 'action-chosen')).toHaveLength(3);
    expect(ofStep(entries, 'step-completed')[0]?.evidence).toMatchObject({ reconciled: true });
    expect((await e.crm.writes()).count - before).toBe(1);
  });

  it("the declarative form's agent probe settles it, each answer a probe-answered entry (settling the intent, then Finish)", {
    timeout: 240_000,
  }, async () => {
    const e = engine();
    const jobId = 'decl-kill-after-click';
    const before = (await e.crm.writes()).count;
    armActionKill(jobId, 'action-executed', 3);
    await submitAgentJob(jobId, 'C-1001', 'crm-contact-decl@1');
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 220_000 });
    expect(job.status).toBe('SUCCEEDED');
    expect(fired(jobId)).toEqual([['action-executed', 3]]);
    expect(ofStep(entries, 'step-completed')[0]?.evidence).toMatchObject({
      customerId: 'C-1001',
      contact: `Agent ${jobId}`,
      reconciled: true,
    });
    // Asked once to settle the uncertain write, once by Finish before the job succeeded: done both times.
    const answers = ofStep(entries, 'probe-answered');
    expect(answers.map((a) => (a.detail?.answer as { status?: string })?.status)).toEqual(['done', 'done']);
    expect(answers[0]?.detail).toMatchObject({ model: 'local', usage: { input: 0, output: 0 } });
    expect(answers[0]?.cost).toMatchObject({ modelTokens: 0, modelUsd: 0 });
    expect((await e.crm.writes()).count - before).toBe(1);
  });
});

describe('Engine: an agent step with a phone number that looks like a card number', () => {
  it('saves a 13-digit E.164 phone number as given, once, and reads its own fill back as typed', {
    timeout: 180_000,
  }, async () => {
    const e = engine();
    const jobId = 'agent-e164';
    const phone = '+4479111234567';
    const before = (await e.crm.writes()).count;
    await submitContactAgent(e, {
      jobId,
      customerId: 'C-1004',
      contactName: 'Ola Nordmann',
      model: 'local',
      phone,
    });
    const { job, entries } = await runToSuccess(e, jobId, { timeoutMs: 160_000 });
    expect(job.status).toBe('SUCCEEDED');
    // Fill, fill, save, done: the policy saw its phone as it typed it, and never typed it again.
    expect(ofStep(entries, 'action-chosen').map((c) => c.detail?.describe)).toEqual([
      'fill textbox "Contact name" = "Ola Nordmann"',
      `fill textbox "Phone" = "${phone}"`,
      'click button "Save record"',
      'done: the form was filled and submitted',
    ]);
    expect(ofStep(entries, 'step-completed')[0]?.evidence).toMatchObject({ phone });
    expect((await e.crm.writes()).count - before).toBe(1);
  });
});
