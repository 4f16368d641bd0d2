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
import { runToExit } from '../../support/processes.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const USER = { username: 'ada@example.com', password: 'expenses-pass-1' };

let site: ExpensesSite;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'belay-playbook-test-'));
  await writeFile(join(tmp, 'creds.json'), JSON.stringify(USER));
  // A site that de-duplicates nothing: a write done twice shows as two records.
  site = await startExpensesSite({ [USER.username]: USER.password }, { dedupe: false });
});

afterAll(async () => {
  await site?.stop();
  await rm(tmp, { recursive: true, force: true });
});

/** The command, to its end: exit code and everything it printed (it must stop by itself). */
function playbookTest(args: string[], expensesSite = true): Promise<{ code: number; output: string }> {
  return runToExit(
    [
      '--import',
      'tsx',
      'tools/playbook/main.ts',
      'test',
      ...args,
      ...(expensesSite
        ? [
            '--applications',
            JSON.stringify({ expenses: { baseUrl: site.baseUrl } }),
            // Three accounts (one sign-in, connected three times): three jobs at a time.
            ...[1, 2, 3].flatMap(() => ['--account', `expenses=@${join(tmp, 'creds.json')}`]),
          ]
        : []),
    ],
    { cwd: REPO, timeoutMs: 420_000 },
  );
}

describe('npm run playbook -- test', () => {
  it('passes a sound playbook from an outside folder: every step safe, progress shown', async () => {
    const { code, output } = await playbookTest([
      'expenses@1',
      '--playbooks',
      join(REPO, 'test', 'fixtures', 'outside-playbooks'),
    ]);
    expect(code, output).toBe(0);
    expect(output).toContain('[15/15]');
    expect(output).toMatch(/create-report\s+write\s+ok\s+-\s+ok\s+ok\s+ok\s+[\d.]+ s\s+yes/);
    expect(output).toMatch(/add-line\s+write\s+ok\s+-\s+ok\s+ok\s+ok/);
    // The answer to each write was dropped after the site committed it: still one write each.
    expect(output).toMatch(/drop-response@create-report: ok, 1 committed write in/);
    expect(output).toMatch(/drop-response@add-line: ok, 1 committed write in/);
    expect(output).toMatch(/sign-in\s+read\s+ok\s+ok\s+-\s+-\s+ok/);
    expect(output).toContain('every step is safe to retry (3 steps)');
    // Each of the 15 jobs made its report once and its line once: no kill or dropped answer made a write twice.
    const reports = site.reports().filter((r) => r.title === 'Trip to Leeds');
    expect(reports.length).toBe(15);
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
      'create-report: its answer dropped after the site committed, the site committed 2 writes in the step',
    );
  }, 450_000);
  it('passes the demo declarative playbook crm-address@1 on the demo CRM (its probe finds the write after a kill)', async () => {
    const { code, output } = await playbookTest(['crm-address@1'], false);
    expect(code, output).toBe(0);
    expect(output).toMatch(/update-crm-address\s+write\s+ok\s+-\s+ok\s+ok\s+ok/);
    expect(output).toMatch(/verify-crm-address\s+read\s+ok\s+ok\s+-\s+-\s+ok/);
    expect(output).toContain('every step is safe to retry (3 steps)');
  }, 450_000);
});
