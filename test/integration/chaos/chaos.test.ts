/**
 * The reduced chaos run of the fault suites: four jobs (checkouts on the shop's TOTP and SMS
 * accounts, two CRM-billing syncs) with every fault kind injected at least once, the stack as
 * a child process killed and restarted once, checked against the demo sites' own records. Then
 * a run against a site of the test's own that lists no committed writes (a real application, as
 * far as the suite can tell): its writes counted by what each write step's probe finds by the
 * job's key, checked here against that site's own notes. Plus the re-execution check on its own,
 * without a stack (the plan's tests are unit tests: `test/unit/tools/chaos-*.test.ts`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntryView } from '../../../tools/chaos/clients.ts';
import type { SeenEvent } from '../../../tools/chaos/events.ts';
import { FAULT_KINDS } from '../../../tools/chaos/faults.ts';
import { DEMO_PLAYBOOKS } from '../../../tools/chaos/plan.ts';
import { formatSummary } from '../../../tools/chaos/report.ts';
import { runChaos } from '../../../tools/chaos/run.ts';
import { reExecutions } from '../../../tools/chaos/verify.ts';
import { type NotesSite, startNotesSite } from '../../support/notes-site.ts';

const SEED = 1;
const RUNS = 4;

describe('the re-execution check', () => {
  const event = (step: string, at: string, point = 'before-action'): SeenEvent =>
    ({
      seq: 1,
      type: 'fault-point',
      at: Date.parse(at),
      bootId: 'b',
      functionName: 'belay-run-step',
      pid: 42,
      point,
      info: { jobId: 'j', step },
    }) as SeenEvent;
  const completed: EntryView[] = [{ type: 'step-completed', step: 'search', at: '2026-01-01T10:00:05.000Z' }];

  it('counts an action that began after the step was recorded complete', () => {
    const found = reExecutions(completed, [
      event('search', '2026-01-01T10:00:01Z'),
      event('search', '2026-01-01T10:00:09Z'),
    ]);
    expect(found).toEqual([
      expect.objectContaining({ step: 'search', completedAt: '2026-01-01T10:00:05.000Z' }),
    ]);
  });

  it('does not count attempts before the completion, other steps, or other points', () => {
    const events = [
      event('search', '2026-01-01T10:00:01Z'),
      event('add-item-a', '2026-01-01T10:00:09Z'),
      event('search', '2026-01-01T10:00:09Z', 'during-checkpoint'),
    ];
    expect(reExecutions(completed, events)).toEqual([]);
  });
});

describe(`a reduced chaos run (${RUNS} jobs, seed ${SEED})`, () => {
  it('ends every job succeeded with one side effect per write, nothing run again, nothing stuck or left running', async () => {
    const lines: string[] = [];
    const summary = await runChaos({
      runs: RUNS,
      seed: SEED,
      playbooks: DEMO_PLAYBOOKS,
      concurrency: 2,
      jobTimeoutMs: 300_000,
      stallTimeoutMs: 150_000,
      runTimeoutMs: 300_000,
      removeDataDir: 'always',
      say: (line) => lines.push(line),
    });
    const report = `${lines.join('\n')}\n${formatSummary(summary)}`;
    expect(summary.jobs, report).toBe(RUNS);
    for (const kind of FAULT_KINDS)
      expect(summary.faultsInjected.byKind[kind], `${kind}\n${report}`).toBeGreaterThanOrEqual(1);
    expect(summary.jobsStuck, report).toBe(0);
    expect(summary.jobsSucceeded, report).toBe(RUNS);
    for (const job of summary.sideEffectsPerJob) {
      for (const count of Object.values(job.writes)) expect(count, `${job.jobId}\n${report}`).toBe(1);
    }
    expect(summary.completedStepsExecutedAgain, report).toBe(0);
    expect(summary.layoutChecks.length, report).toBeGreaterThanOrEqual(1);
    expect(
      summary.layoutChecks.every((c) => c.ok && c.reviewStep !== undefined),
      report,
    ).toBe(true);
    expect(summary.recordProblems, report).toEqual([]);
    expect(summary.people.mfaCodes, report).toBeGreaterThanOrEqual(1);
    expect(summary.stackRestarts.length, report).toBeGreaterThanOrEqual(1);
    expect(summary.leftoverProcesses, report).toEqual([]);
    expect(summary.ok, report).toBe(true);
  }, 720_000);
});

describe('a chaos run against a site with no records endpoint (3 jobs, seed 2)', () => {
  const NOTES = resolve(import.meta.dirname, '../../fixtures/notes-playbooks');
  const USER = { username: 'ada@example.com', password: 'notes-pass-1' };
  let notes: NotesSite;
  let tmp: string;

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'belay-chaos-notes-'));
    await writeFile(join(tmp, 'creds.json'), JSON.stringify(USER));
    // It de-duplicates nothing and its page sends a heartbeat POST of its own every 500 ms.
    notes = await startNotesSite({ [USER.username]: USER.password }, { heartbeatMs: 500 });
    // The name the profile job sets is already the profile's: its write is already satisfied.
    notes.setDisplayName('Ada Lovelace');
  });

  afterAll(async () => {
    await notes?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('counts each write by what its probe finds by the job’s key, the one already satisfied apart', async () => {
    const lines: string[] = [];
    const summary = await runChaos({
      runs: 3,
      seed: 2,
      concurrency: 2,
      playbooks: ['note@1', 'profile@1'],
      playbookDirs: [NOTES],
      applications: JSON.stringify({ notes: { baseUrl: notes.baseUrl } }),
      // Two accounts (one sign-in, connected twice): two jobs at a time.
      accounts: [1, 2].map(() => ({ app: 'notes', credentialsFile: join(tmp, 'creds.json') })),
      inputs: { 'profile@1': { name: 'Ada Lovelace' } },
      jobTimeoutMs: 240_000,
      stallTimeoutMs: 150_000,
      runTimeoutMs: 240_000,
      removeDataDir: 'always',
      say: (line) => lines.push(line),
    });
    const report = `${lines.join('\n')}\n${formatSummary(summary)}`;
    expect(lines.join('\n'), report).toContain(
      'notes (' +
        notes.baseUrl +
        ") lists no committed writes (GET /__admin/writes): its writes are counted by what each write step's probe finds by the job's key",
    );
    expect(summary.jobs, report).toBe(3);
    expect(summary.writesCountedBy, report).toEqual({ site: 0, probe: 3 });
    expect(summary.jobsSucceeded, report).toBe(3);
    expect(summary.duplicateSideEffects, report).toBe(0);
    expect(summary.missingSideEffects, report).toBe(0);
    expect(summary.uncountedWrites, report).toEqual([]);
    expect(formatSummary(summary)).toContain("by what each write step's probe found by the job's key");
    // Faults still land (worker, browser and stack kills need nothing of the site), those that
    // need the admin contract are planned nowhere.
    expect(summary.faultsInjected.total, report).toBeGreaterThanOrEqual(1);
    expect(summary.faultsUnplanned, report).toMatchObject({ 'sign-in-expiry': 1, 'layout-change': 1 });
    // What the probe counted is what the site holds: one note per note job, made under its key.
    const held = notes.records();
    const noteJobs = summary.sideEffectsPerJob.filter((j) => j.playbook === 'note@1');
    expect(noteJobs, report).toHaveLength(2);
    for (const job of noteJobs) {
      expect(job.writes, report).toEqual({ 'save-note': 1 });
      expect(
        held.notes.filter((n) => n.body.includes(`(${job.jobId}:save-note:`)),
        report,
      ).toHaveLength(1);
    }
    // The profile already showed the name: done without acting, counted apart, never saved.
    expect(
      summary.sideEffectsPerJob.find((j) => j.playbook === 'profile@1')?.alreadySatisfied,
      report,
    ).toEqual(['set-name']);
    expect(summary.alreadySatisfiedWrites, report).toBe(1);
    expect(held.profileSaves, report).toBe(0);
    expect(summary.asksOverBudget, report).toEqual([]);
    expect(summary.leftoverProcesses, report).toEqual([]);
    expect(summary.ok, report).toBe(true);
  }, 600_000);
});
