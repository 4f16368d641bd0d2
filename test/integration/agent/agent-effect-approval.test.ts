/**
 * An agent step approved on its exact effect, through the whole local stack (the real ASL, RunStep
 * in its bundle, DynamoDB Local, Chromium, the `local` model policy), on the notes site's transfer
 * form (the tests' own site; the site sets the amount itself):
 *
 * - the agent runs up to the click that would send the transfer (the request refused, never
 *   sent); the person is shown the form's fields, the planned actions (job values as references)
 *   and a screenshot; approved, the job commits with exactly that click, once;
 * - the amount changes after the approval: nothing is sent, the job asks again with the field's
 *   difference, and sends once when approved again;
 * - the button is renamed after the approval, so the model plans another click: nothing is sent,
 *   the job asks again with the action's difference, and sends once when approved again.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { questionCard, questionOf } from '../../../lambdas/lib/api/console/questions.ts';
import { decide } from '../../../lambdas/lib/api/jobs/decide.ts';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { PERSON } from '../../support/fixtures.ts';
import { diagnose, waitForJob } from '../../support/jobs.ts';
import { type NotesSite, startNotesSite } from '../../support/notes-site.ts';
import { ofType } from '../../support/records.ts';
import {
  approvalShown,
  fieldValue,
  TRANSFER_STEP,
  TRANSFER_USER,
  transferSubmitter,
} from '../../support/transfers.ts';

const PLAYBOOKS = resolve(import.meta.dirname, '../../fixtures/notes-playbooks');
const STEP = TRANSFER_STEP;
const PLAN = [
  'fill textbox "Payee" = "{{inputs.payee}}"',
  'fill textbox "Reference" = "{{inputs.reference}}"',
  'click button "Send"',
];

let site: NotesSite;
beforeAll(async () => {
  site = await startNotesSite({ [TRANSFER_USER.username]: TRANSFER_USER.password }, { heartbeatMs: 0 });
});
afterAll(async () => {
  await site?.stop();
});

const engine = useEngineStack(() => ({
  playbookDirs: [PLAYBOOKS],
  applications: { notes: { baseUrl: site.baseUrl } },
  env: { BELAY_AGENT_LOCAL_LATENCY_MS: '0' },
}));

const submit = transferSubmitter(engine, 'transfer-agent@1');
const shownFor = (jobId: string, reason: string) => approvalShown(engine(), jobId, reason, 150_000);

async function approveAndFinish(jobId: string, hash: string) {
  await decide(engine().api, PERSON, jobId, { step: STEP, decision: 'approve', effectHash: hash });
  const done = await waitForJob(
    engine(),
    jobId,
    ({ job }) => job.status !== 'RUNNING' && job.status !== 'WAITING_APPROVAL',
    { timeoutMs: 150_000, what: 'the end of the job' },
  );
  expect(done.job.status, await diagnose(engine(), jobId)).toBe('SUCCEEDED');
  return done;
}

const value = fieldValue;
const ofStep = (entries: readonly LedgerEntry[], type: LedgerEntry['type']) =>
  ofType(entries, type).filter((e) => e.step === STEP);

describe.sequential('Agent steps: an approval bound to the exact effect', () => {
  it('shows the form and the planned actions, sends nothing while the person looks, then commits once', {
    timeout: 300_000,
  }, async () => {
    site.setTransferAmount('100.00');
    site.setTransferButton('Send');
    const before = site.records().transfers.length;
    await submit('agent-effect-same', 'Invoice A1');
    const { shown, job, entries } = await shownFor('agent-effect-same', 'approve_effect');
    expect(value(shown, /^Payee/)).toBe('Grace Hopper');
    expect(value(shown, /^Reference/)).toBe('Invoice A1');
    expect(value(shown, /^Amount/)).toBe('100.00');
    expect(shown.actions).toEqual(PLAN);
    expect(shown.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(shown.screenshot).toMatch(/screenshots/);
    // The click ran while preparing, its request refused: nothing reached the site.
    expect(site.records().transfers.length).toBe(before);
    // The console's approval card shows the planned actions beside the fields.
    const question = questionOf(job, entries, undefined);
    const card = questionCard(question as NonNullable<typeof question>, PERSON, 'csrf').value;
    expect(card).toContain('What the agent will do');
    expect(card).toContain('<code>click button &quot;Send&quot;</code>');
    expect(card).toContain(`value="${shown.hash}"`);

    const done = await approveAndFinish('agent-effect-same', shown.hash);
    const sent = site.records().transfers.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ payee: 'Grace Hopper', reference: 'Invoice A1', amount: '100.00' });
    expect(ofStep(done.entries, 'approval-recorded')[0]?.detail?.effectHash).toBe(shown.hash);
    expect(ofStep(done.entries, 'effect-changed')).toEqual([]);
    // Each action was chosen once; the commit ran the approved click, recorded before the approval.
    expect(ofStep(done.entries, 'action-chosen').map((e) => e.detail?.n)).toEqual([1, 2, 3]);
    const completed = ofStep(done.entries, 'step-completed')[0];
    expect(completed?.evidence).toMatchObject({ amount: '100.00' });
    const guard = completed?.detail?.writeGuard as { commits?: unknown[] } | undefined;
    expect(guard?.commits).toHaveLength(1);
  });

  it('sends nothing when the amount changed after the approval: asks again with the difference, then sends once', {
    timeout: 300_000,
  }, async () => {
    site.setTransferAmount('100.00');
    site.setTransferButton('Send');
    const before = site.records().transfers.length;
    await submit('agent-effect-amount', 'Invoice A2');
    const first = (await shownFor('agent-effect-amount', 'approve_effect')).shown;
    site.setTransferAmount('120.00');
    await decide(engine().api, PERSON, 'agent-effect-amount', {
      step: STEP,
      decision: 'approve',
      effectHash: first.hash,
    });
    const again = (await shownFor('agent-effect-amount', 'effect_changed')).shown;
    expect(site.records().transfers.length).toBe(before);
    expect(again.hash).not.toBe(first.hash);
    expect(again.changes).toEqual([
      { name: expect.stringMatching(/^Amount/), before: '100.00', after: '120.00' },
    ]);
    expect(again.actions).toEqual(PLAN);
    expect(again.approvedBy).toBe(PERSON.keyId);

    const done = await approveAndFinish('agent-effect-amount', again.hash);
    const sent = site.records().transfers.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.amount).toBe('120.00');
    expect(ofStep(done.entries, 'effect-changed')).toHaveLength(1);
    expect(ofStep(done.entries, 'approval-recorded')).toHaveLength(2);
  });

  it('sends nothing when the model plans another commit after the approval: asks again with the action, then sends once', {
    timeout: 300_000,
  }, async () => {
    site.setTransferAmount('100.00');
    site.setTransferButton('Send');
    const before = site.records().transfers.length;
    await submit('agent-effect-plan', 'Invoice A3');
    const first = (await shownFor('agent-effect-plan', 'approve_effect')).shown;
    expect(first.actions).toEqual(PLAN);
    // The approved click no longer resolves: the model chooses another one.
    site.setTransferButton('Send now');
    try {
      await decide(engine().api, PERSON, 'agent-effect-plan', {
        step: STEP,
        decision: 'approve',
        effectHash: first.hash,
      });
      const asked = await shownFor('agent-effect-plan', 'effect_changed');
      const again = asked.shown;
      expect(site.records().transfers.length).toBe(before);
      expect(again.changes).toEqual([
        { name: 'action 3', action: true, before: 'click button "Send"', after: 'click button "Send now"' },
      ]);
      expect(again.actions).toEqual([...PLAN.slice(0, 2), 'click button "Send now"']);
      expect(ofStep(asked.entries, 'action-healed')).toHaveLength(1);

      const done = await approveAndFinish('agent-effect-plan', again.hash);
      const sent = site.records().transfers.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ reference: 'Invoice A3', amount: '100.00' });
      expect(ofStep(done.entries, 'approval-recorded')).toHaveLength(2);
    } finally {
      site.setTransferButton('Send');
    }
  });
});
