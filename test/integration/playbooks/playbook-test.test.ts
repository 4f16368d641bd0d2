/**
 * `npm run playbook -- test` as a playbook author runs it: the command on the local stack it
 * starts (and stops), against a site of the author's own. A sound playbook passes with every
 * step safe to retry; a broken one (a write whose probe finds nothing, a read that is not safe
 * to run twice) fails, naming the steps.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExpensesSite, startExpensesSite } from '../../support/expenses-site.ts';
import { type NotesSite, startNotesSite } from '../../support/notes-site.ts';
import { runToExit } from '../../support/processes.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const USER = { username: 'ada@example.com', password: 'expenses-pass-1' };

let site: ExpensesSite;
let notes: NotesSite;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'belay-playbook-test-'));
  await writeFile(join(tmp, 'creds.json'), JSON.stringify(USER));
  // A site that de-duplicates nothing: a write done twice shows as two records.
  site = await startExpensesSite({ [USER.username]: USER.password }, { dedupe: false });
  // A site that saves in the background and sends a heartbeat POST every 500 ms of its own.
  notes = await startNotesSite({ [USER.username]: USER.password }, { heartbeatMs: 500 });
});

afterAll(async () => {
  await site?.stop();
  await notes?.stop();
  await rm(tmp, { recursive: true, force: true });
});

/** The command, to its end: exit code and everything it printed (it must stop by itself). */
function playbookTest(
  args: string[],
  app: 'expenses' | 'notes' | 'demo' = 'expenses',
): Promise<{ code: number; output: string }> {
  const baseUrl = app === 'expenses' ? site.baseUrl : app === 'notes' ? notes.baseUrl : '';
  return runToExit(
    [
      '--import',
      'tsx',
      'tools/playbook/main.ts',
      'test',
      ...args,
      ...(app !== 'demo'
        ? [
            '--applications',
            JSON.stringify({ [app]: { baseUrl } }),
            // Three accounts (one sign-in, connected three times): three jobs at a time.
            ...[1, 2, 3].flatMap(() => ['--account', `${app}=@${join(tmp, 'creds.json')}`]),
          ]
        : []),
    ],
    { cwd: REPO, timeoutMs: 420_000 },
  );
}

const NOTES = join(REPO, 'test', 'fixtures', 'notes-playbooks');

describe('npm run playbook -- test', () => {
  it('passes a sound playbook from an outside folder: every step safe, progress shown', async () => {
    const { code, output } = await playbookTest([
      'expenses@1',
      '--playbooks',
      join(REPO, 'test', 'fixtures', 'outside-playbooks'),
    ]);
    expect(code, output).toBe(0);
    expect(output).toContain('[16/16]');
    expect(output).toContain("each run's inputs are its own: title is marked with the run");
    expect(output).toMatch(/create-report\s+write\s+ok\s+ok\s+-\s+ok\s+ok\s+ok\s+[\d.]+ s\s+yes/);
    expect(output).toMatch(/add-line\s+write\s+ok\s+ok\s+-\s+ok\s+ok\s+ok/);
    // The answer to each write was dropped after the site committed it: still one write each.
    expect(output).toContain('drop-response@create-report: ok, 1 committed write (POST /reports) in');
    expect(output).toContain('drop-response@add-line: ok, 1 committed write (POST /reports/{id}/lines) in');
    expect(output).toMatch(/sign-in\s+read\s+ok\s+-\s+ok\s+-\s+-\s+ok/);
    expect(output).toContain('every step is safe to retry (3 steps)');
    // Each of the 16 jobs made its report once and its line once: no kill or dropped answer made
    // a write twice. Each run had a title of its own, but the repeat (the clean run's inputs again).
    const reports = site.reports().filter((r) => r.title.startsWith('Trip to Leeds run-'));
    expect(reports.length).toBe(16);
    expect(new Set(reports.map((r) => r.title)).size).toBe(15);
    expect(reports.every((r) => r.lines.length === 1)).toBe(true);
  }, 450_000);

  it('fails a write without a working probe and a read that is not idempotent, naming both steps', async () => {
    const { code, output } = await playbookTest([
      'expenses-broken@1',
      '--playbooks',
      join(REPO, 'test', 'fixtures', 'broken-playbooks'),
      '--steps',
      'create-report,note-visit',
    ]);
    expect(code, output).toBe(1);
    expect(output).toContain('NOT safe to retry: create-report, note-visit');
    expect(output).toContain('create-report: killed after its action, the probe said absent: it acted twice');
    expect(output).toMatch(/note-visit: re-run after kill-after: FAILED/);
    // Its answer dropped, the probe that finds nothing made the site commit the report twice.
    expect(output).toContain(
      'create-report: its answer dropped after the site committed, the site committed 2 writes (POST /reports) in the step',
    );
  }, 450_000);
  it('passes the demo declarative playbook crm-address@1 on the demo CRM (its probe finds the write after a kill)', async () => {
    const { code, output } = await playbookTest(['crm-address@1'], 'demo');
    expect(code, output).toBe(0);
    expect(output).toMatch(/update-crm-address\s+write\s+ok\s+ok\s+-\s+ok\s+ok\s+ok/);
    expect(output).toMatch(/verify-crm-address\s+read\s+ok\s+-\s+ok\s+-\s+-\s+ok/);
    expect(output).toContain('every step is safe to retry (3 steps)');
  }, 450_000);

  it('on a page with a heartbeat POST every 500 ms, counts only the save: safe when it reached the site once', async () => {
    const before = notes.records();
    const { code, output } = await playbookTest(
      ['note@1', '--playbooks', NOTES, '--steps', 'save-note'],
      'notes',
    );
    expect(code, output).toBe(0);
    expect(output).toMatch(
      /drop-response@save-note: ok, 1 committed write \(POST \^\/api\/notes\$\); background \d+ POST \/api\/heartbeat/,
    );
    expect(output).toMatch(/save-note\s+write\s+ok\s+ok\s+-\s+ok\s+ok\s+ok/);
    // Counted in the application: one note per run, with a title of its own but the repeat's.
    const after = notes.records();
    const made = after.notes.slice(before.notes.length);
    expect(made).toHaveLength(7);
    expect(new Set(made.map((n) => n.title)).size).toBe(6);
    expect(after.saves - before.saves).toBe(7);
    expect(after.heartbeats).toBeGreaterThan(before.heartbeats);
  }, 450_000);

  it('judges unsafe a save that reached the site twice (its probe looks where the note is not), the heartbeat apart', async () => {
    const { code, output } = await playbookTest(
      ['note-broken@1', '--playbooks', NOTES, '--steps', 'save-note'],
      'notes',
    );
    expect(code, output).toBe(1);
    expect(output).toContain('NOT safe to retry: save-note');
    expect(output).toContain(
      'save-note: its answer dropped after the site committed, the site committed 2 writes (POST ^/api/notes$) in the step',
    );
  }, 450_000);

  it('fails a write that creates whose check already holds before the action, saying what to change', async () => {
    notes.setOptions({ order: 'oldest' });
    try {
      const { code, output } = await playbookTest(
        ['note-unkeyed@1', '--playbooks', NOTES, '--steps', 'save-note', '--no-drop'],
        'notes',
      );
      expect(code, output).toBe(1);
      expect(output).toContain(
        "save-note: its check already holds before the action (the clean run's record satisfies it): make expect name this job's own record",
      );
    } finally {
      notes.setOptions({ order: 'newest' });
    }
  }, 450_000);

  it("reports a write whose evidence names another run's record (the field it names as new is not the record's)", async () => {
    notes.setOptions({ order: 'oldest' });
    try {
      const { code, output } = await playbookTest(
        ['note-wrong-field@1', '--playbooks', NOTES, '--steps', 'save-note', '--no-drop'],
        'notes',
      );
      expect(code, output).toBe(1);
      expect(output).toContain(
        'save-note: its evidence names another record than the one its probe finds by the key (noteId, run repeat)',
      );
    } finally {
      notes.setOptions({ order: 'newest' });
    }
  }, 450_000);
});
