/**
 * An approval bound to the exact effect, through the whole local stack, on a site that is not on
 * the engine's side (the notes site's transfer form: the job fills payee and reference, the site
 * sets the amount itself):
 *
 * - the person is shown what the form would send (its fields and values, a screenshot), and the
 *   decision is recorded against its hash; unchanged at execution, the transfer is sent once;
 * - the amount changes after the approval and before the commit: nothing is sent, the job asks
 *   again showing the old and the new amount, and once approved again sends exactly one transfer
 *   of the new amount;
 * - an approval of an effect the person was not shown (a stale hash) is refused, recording nothing.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectAccount } from '../../../lambdas/lib/api/accounts/manage.ts';
import { decide } from '../../../lambdas/lib/api/jobs/decide.ts';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import { effectView } from '../../../lambdas/lib/api/jobs/views.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { PERSON } from '../../support/fixtures.ts';
import { diagnose, waitForJob } from '../../support/jobs.ts';
import { type NotesSite, startNotesSite } from '../../support/notes-site.ts';
import { ofType } from '../../support/records.ts';

const USER = { username: 'ada@example.com', password: 'notes-pass-1' };
const PLAYBOOKS = resolve(import.meta.dirname, '../../fixtures/notes-playbooks');

let site: NotesSite;
beforeAll(async () => {
  site = await startNotesSite({ [USER.username]: USER.password }, { heartbeatMs: 0 });
});
afterAll(async () => {
  await site?.stop();
});

const engine = useEngineStack(() => ({
  playbookDirs: [PLAYBOOKS],
  applications: { notes: { baseUrl: site.baseUrl } },
}));

let account: string | undefined;
async function submit(jobId: string, reference: string): Promise<void> {
  const e = engine();
  account ??= (
    await connectAccount(e.api, PERSON, { application: 'notes', label: 'notes', credentials: USER })
  ).accountId;
  await submitJob(
    e.api,
    PERSON,
    {
      jobId,
      playbook: 'transfer@1',
      inputs: { payee: 'Grace Hopper', reference },
      accounts: { notes: account },
    },
    undefined,
  );
}

/** Waits until the job waits for approval of the transfer; returns what the approver is shown. */
async function approvalShown(jobId: string, reason: string) {
  const { entries, job } = await waitForJob(
    engine(),
    jobId,
    ({ job: j }) => j.status === 'WAITING_APPROVAL' && j.wait?.reason === reason,
    { timeoutMs: 120_000, what: `waiting for approval (${reason})` },
  );
  const shown = effectView(entries, 'send-transfer');
  if (!shown) throw new Error(`${jobId} shows no effect: ${JSON.stringify(job.wait)}`);
  return shown;
}

const value = (shown: { fields: { name: string; value: string }[] }, name: RegExp): string | undefined =>
  shown.fields.find((f) => name.test(f.name))?.value;

describe.sequential('Engine: an approval bound to the exact effect', () => {
  it('shows what the form would send, records the decision against it, and sends it once', {
    timeout: 240_000,
  }, async () => {
    site.setTransferAmount('100.00');
    const before = site.records().transfers.length;
    await submit('effect-same', 'Invoice 7');
    const shown = await approvalShown('effect-same', 'approve_effect');
    expect(value(shown, /^Payee/)).toBe('Grace Hopper');
    expect(value(shown, /^Reference/)).toMatch(/^Invoice 7 effect-same:send-transfer:/);
    expect(value(shown, /^Amount/)).toBe('100.00');
    expect(shown.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(shown.screenshot).toMatch(/screenshots/);
    // Nothing is sent while the person looks.
    expect(site.records().transfers.length).toBe(before);

    await decide(engine().api, PERSON, 'effect-same', {
      step: 'send-transfer',
      decision: 'approve',
      effectHash: shown.hash,
    });
    const done = await waitForJob(
      engine(),
      'effect-same',
      ({ job }) => job.status !== 'RUNNING' && job.status !== 'WAITING_APPROVAL',
      {
        timeoutMs: 120_000,
        what: 'the end of the job',
      },
    );
    expect(done.job.status, await diagnose(engine(), 'effect-same')).toBe('SUCCEEDED');
    const sent = site.records().transfers.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ payee: 'Grace Hopper', amount: '100.00' });
    const approval = ofType(done.entries, 'approval-recorded').find((x) => x.step === 'send-transfer');
    expect(approval?.detail?.effectHash).toBe(shown.hash);
    expect(ofType(done.entries, 'effect-changed')).toEqual([]);
  });

  it('sends nothing when the amount changed after the approval: asks again with old and new, then sends once', {
    timeout: 300_000,
  }, async () => {
    site.setTransferAmount('100.00');
    const before = site.records().transfers.length;
    await submit('effect-changed', 'Invoice 8');
    const first = await approvalShown('effect-changed', 'approve_effect');
    // The site's amount changes between the person's look and the commit.
    site.setTransferAmount('120.00');
    await decide(engine().api, PERSON, 'effect-changed', {
      step: 'send-transfer',
      decision: 'approve',
      effectHash: first.hash,
    });
    const again = await approvalShown('effect-changed', 'effect_changed');
    expect(site.records().transfers.length).toBe(before);
    expect(again.hash).not.toBe(first.hash);
    expect(again.changes).toEqual([
      { name: expect.stringMatching(/^Amount/), before: '100.00', after: '120.00' },
    ]);
    expect(again.approvedBy).toBe(PERSON.keyId);

    // The stale hash is refused: the person must look again; nothing is recorded.
    const stale = await decide(engine().api, PERSON, 'effect-changed', {
      step: 'send-transfer',
      decision: 'approve',
      effectHash: first.hash,
    }).catch((e: unknown) => e);
    expect(stale).toMatchObject({ statusCode: 409, code: 'effect_changed' });

    await decide(engine().api, PERSON, 'effect-changed', {
      step: 'send-transfer',
      decision: 'approve',
      effectHash: again.hash,
    });
    const done = await waitForJob(
      engine(),
      'effect-changed',
      ({ job }) => job.status === 'SUCCEEDED' || job.status === 'FAILED',
      {
        timeoutMs: 120_000,
        what: 'the end of the job',
      },
    );
    expect(done.job.status, await diagnose(engine(), 'effect-changed')).toBe('SUCCEEDED');
    const sent = site.records().transfers.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.amount).toBe('120.00');
    expect(ofType(done.entries, 'effect-changed')).toHaveLength(1);
    expect(ofType(done.entries, 'approval-recorded')).toHaveLength(2);
  });
});
