/**
 * A write must prove its own effect, on a site that is not on the engine's side (the notes site:
 * a form that saves in the background, a list of links by title, a heartbeat of its own, nothing
 * de-duplicated), through the whole local stack:
 *
 * - a verify that already holds before the action (an earlier note with the same title) never
 *   completes the write on that old record: the write is unconfirmed, and its probe finds the
 *   job's own note by its key;
 * - a write that names its new field (`newEvidence`) and waits for its save's answer completes on
 *   the new note's id at once, with the committing request recorded apart from the heartbeat;
 * - a write that sets a value already set is done without acting: no request reaches the site.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectAccount } from '../../../lambdas/lib/api/accounts/manage.ts';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import { useEngineStack } from '../../support/engine-stack.ts';
import { PERSON } from '../../support/fixtures.ts';
import { diagnose, waitForJob } from '../../support/jobs.ts';
import { type NotesSite, startNotesSite } from '../../support/notes-site.ts';
import { keyOf, ofType } from '../../support/records.ts';

const USER = { username: 'ada@example.com', password: 'notes-pass-1' };
const PLAYBOOKS = resolve(import.meta.dirname, '../../fixtures/notes-playbooks');

let site: NotesSite;
beforeAll(async () => {
  site = await startNotesSite({ [USER.username]: USER.password });
});
afterAll(async () => {
  await site?.stop();
});

const engine = useEngineStack(() => ({
  playbookDirs: [PLAYBOOKS],
  applications: { notes: { baseUrl: site.baseUrl } },
}));

let account: string | undefined;
async function run(jobId: string, playbook: string, inputs: Record<string, unknown>) {
  const e = engine();
  account ??= (
    await connectAccount(e.api, PERSON, { application: 'notes', label: 'notes', credentials: USER })
  ).accountId;
  await submitJob(e.api, PERSON, { jobId, playbook, inputs, accounts: { notes: account } }, undefined);
  const done = await waitForJob(
    e,
    jobId,
    ({ job }) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status),
    {
      timeoutMs: 120_000,
      what: 'the end of the job',
    },
  );
  expect(done.job.status, await diagnose(e, jobId)).toBe('SUCCEEDED');
  return done;
}

describe.sequential('Engine: a write proves its own effect', () => {
  it('does not complete a write on an earlier note that already satisfied its check: the probe finds its own', {
    timeout: 180_000,
  }, async () => {
    site.setOptions({ order: 'oldest', answerDelayMs: 300 });
    const old = site.addNote('Monday notes', 'written before the job');
    const savesBefore = site.records().saves;
    const { entries } = await run('fresh-unkeyed', 'note-unkeyed@1', {
      title: 'Monday notes',
      text: 'Fresh',
    });
    const key = await keyOf(engine(), 'fresh-unkeyed', 'save-note');
    const mine = site.records().notes.filter((n) => n.body.includes(key));
    // Exactly one note of this job, made by one save.
    expect(mine).toHaveLength(1);
    expect(site.records().saves - savesBefore).toBe(1);
    const started = ofType(entries, 'step-started').find((x) => x.step === 'save-note');
    expect(started?.detail?.heldBefore).toBe(true);
    const unconfirmed = ofType(entries, 'step-unconfirmed').find((x) => x.step === 'save-note');
    expect(String(unconfirmed?.detail?.reason)).toContain('already held before the action');
    const completed = ofType(entries, 'step-completed').find((x) => x.step === 'save-note');
    // The job's own note, found by its key; never the earlier one.
    expect(completed?.evidence).toMatchObject({ noteId: mine[0]?.id, reconciled: true });
    expect(completed?.evidence?.noteId).not.toBe(old.id);
  });

  it('completes a write that names its new field on the new note at once, its save apart from the heartbeat', {
    timeout: 180_000,
  }, async () => {
    site.setOptions({ order: 'newest', answerDelayMs: 800, heartbeatMs: 200 });
    site.addNote('Tuesday notes', 'written before the job');
    const savesBefore = site.records().saves;
    const { entries } = await run('fresh-keyed', 'note@1', { title: 'Tuesday notes', text: 'Fresh' });
    const key = await keyOf(engine(), 'fresh-keyed', 'save-note');
    const mine = site.records().notes.filter((n) => n.body.includes(key));
    expect(mine).toHaveLength(1);
    expect(site.records().saves - savesBefore).toBe(1);
    expect(ofType(entries, 'step-unconfirmed').filter((x) => x.step === 'save-note')).toEqual([]);
    const completed = ofType(entries, 'step-completed').find((x) => x.step === 'save-note');
    expect(completed?.evidence).toEqual({ noteId: mine[0]?.id });
    const guard = completed?.detail?.writeGuard as {
      commits: { method: string; url: string; status?: number }[];
      background?: number;
    };
    // With what the site answered, for the write's receipt: its media type and a redacted excerpt of its body.
    expect(guard.commits).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: `${site.baseUrl}/api/notes`,
        status: 201,
        contentType: 'application/json',
        excerpt: JSON.stringify({ id: mine[0]?.id }),
      }),
    ]);
    // The heartbeat went on while the save was held and answered late: background, not the write.
    expect(guard.background ?? 0).toBeGreaterThan(0);
  });

  it('is done without acting when the value a write sets is already set: no save reaches the site', {
    timeout: 180_000,
  }, async () => {
    site.setOptions({ heartbeatMs: 500, answerDelayMs: 0 });
    site.setDisplayName('Ada Lovelace');
    const { entries } = await run('sets-satisfied', 'profile@1', { name: 'Ada Lovelace' });
    expect(site.records().profileSaves).toBe(0);
    expect(ofType(entries, 'step-started').filter((x) => x.step === 'set-name')).toEqual([]);
    const completed = ofType(entries, 'step-completed').find((x) => x.step === 'set-name');
    expect(completed?.detail?.alreadySatisfied).toBe(true);
    expect(completed?.evidence).toEqual({ name: 'Ada Lovelace' });

    // Another value is a write of the job: one save.
    const again = await run('sets-changed', 'profile@1', { name: 'Grace Hopper' });
    expect(site.records().profileSaves).toBe(1);
    expect(site.records().displayName).toBe('Grace Hopper');
    const changed = ofType(again.entries, 'step-completed').find((x) => x.step === 'set-name');
    expect(changed?.detail?.alreadySatisfied).toBeUndefined();
  });
});
