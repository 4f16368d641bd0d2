/**
 * How the chaos summary judges jobs and writes, without a stack: a write already satisfied is
 * counted apart (neither missing nor the job's), a write that cannot be counted fails the run, a
 * job that asked a person about one write past its retry budget fails the run, and the text says
 * how the writes were counted and how many asks each job had per step.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../../tools/chaos/faults.ts';
import type { JobOutcome, WriteCount } from '../../../tools/chaos/job-driver.ts';
import {
  type ChaosSummary,
  formatSummary,
  jobLine,
  jobOk,
  jobsPass,
  summarizeJobs,
  writeVerdict,
} from '../../../tools/chaos/report.ts';

const write = (step: string, count: number | null, more: Partial<WriteCount> = {}): WriteCount => ({
  step,
  key: `job:${step}:abc`,
  count,
  countedBy: 'site',
  alreadySatisfied: false,
  ...more,
});

function outcome(jobId: string, more: Partial<JobOutcome> = {}): JobOutcome {
  return {
    jobId,
    playbook: 'p@1',
    resources: ['customer:x'],
    status: 'SUCCEEDED',
    seconds: 12,
    faults: [],
    writes: [write('save', 1)],
    verifiedWrites: 1,
    recordProblems: [],
    reExecuted: [],
    layoutChecks: [],
    asks: {},
    retryBudget: 3,
    stuck: false,
    ...more,
  };
}

describe('Function: writeVerdict', () => {
  it.each([
    [write('s', 1), 'one'],
    [write('s', 2), 'duplicate'],
    [write('s', 0), 'missing'],
    [write('s', null, { countedBy: 'probe' }), 'uncounted'],
    // Done without acting: none of the job's expected, one from an earlier attempt is no duplicate.
    [write('s', 0, { alreadySatisfied: true }), 'satisfied'],
    [write('s', 1, { alreadySatisfied: true }), 'satisfied'],
    [write('s', 2, { alreadySatisfied: true }), 'duplicate'],
  ] as const)('%j is %s', (w, verdict) => {
    expect(writeVerdict(w)).toBe(verdict);
  });
});

describe('Function: summarizeJobs', () => {
  it('counts a write already satisfied apart: not missing, and the run passes', () => {
    const s = summarizeJobs([
      outcome('j1'),
      outcome('j2', { writes: [write('set-name', 0, { alreadySatisfied: true })] }),
    ]);
    expect(s).toMatchObject({
      duplicateSideEffects: 0,
      missingSideEffects: 0,
      alreadySatisfiedWrites: 1,
      writesCountedBy: { site: 2, probe: 0 },
      jobsByStatus: { SUCCEEDED: 2 },
    });
    expect(s.sideEffectsPerJob[1]).toEqual({
      jobId: 'j2',
      playbook: 'p@1',
      writes: { 'set-name': 0 },
      alreadySatisfied: ['set-name'],
    });
    expect(jobsPass(s, 2)).toBe(true);
  });

  it('fails the run on a duplicate, a missing write, a write it could not count', () => {
    for (const w of [
      write('save', 2),
      write('save', 0),
      write('save', null, { countedBy: 'probe', how: 'x' }),
    ]) {
      const s = summarizeJobs([outcome('j1', { writes: [w] })]);
      expect(jobsPass(s, 1)).toBe(false);
    }
    const s = summarizeJobs([outcome('j1', { writes: [write('a', 3), write('b', 0), write('c', null)] })]);
    expect(s).toMatchObject({ duplicateSideEffects: 2, missingSideEffects: 1 });
    expect(s.uncountedWrites).toEqual([{ jobId: 'j1', step: 'c', why: 'no count' }]);
  });

  it('fails a job that asked a person to review one write more often than its retry budget allows', () => {
    const within = outcome('j1', { asks: { save: { approval: 1, review: 4, mfa: 0 } } });
    const past = outcome('j2', { asks: { save: { approval: 0, review: 5, mfa: 0 } } });
    expect(jobOk(within)).toBe(true);
    expect(jobOk(past)).toBe(false);
    const s = summarizeJobs([within, past]);
    expect(s.asksOverBudget).toEqual([{ jobId: 'j2', step: 'save', reviews: 5, allowed: 4 }]);
    expect(s.asksPerJob).toEqual([
      { jobId: 'j1', retryBudget: 3, steps: { save: { approval: 1, review: 4, mfa: 0 } } },
      { jobId: 'j2', retryBudget: 3, steps: { save: { approval: 0, review: 5, mfa: 0 } } },
    ]);
    expect(jobsPass(s, 2)).toBe(false);
    expect(jobLine(past, 2, 2)).toMatch(/^FAIL .*asked to review save 5 times \(retry budget 3\)/);
  });
});

describe('Function: formatSummary', () => {
  function summary(outcomes: JobOutcome[]): ChaosSummary {
    const zero = Object.fromEntries(
      FAULT_KINDS.map((k) => [k, 0]),
    ) as ChaosSummary['faultsInjected']['byKind'];
    const jobs = summarizeJobs(outcomes);
    return {
      seed: 1,
      runs: outcomes.length,
      playbooks: ['note@1'],
      concurrency: 2,
      dataDir: '/tmp/x',
      wallSeconds: 60,
      faultsInjected: { total: 0, byKind: zero },
      faultsPlanned: { total: 0, byKind: zero },
      faultsUnplanned: {},
      ...jobs,
      dedupe: false,
      people: { approvals: 1, reviews: 0, mfaCodes: 0 },
      stackRestarts: [],
      notStarted: [],
      leftoverProcesses: [],
      ok: jobsPass(jobs, outcomes.length),
    };
  }

  it('says the writes were counted by the probe, and each job’s asks per step', () => {
    const text = formatSummary(
      summary([
        outcome('chaos-s1-01', {
          writes: [write('save-note', 1, { countedBy: 'probe', how: 'the final check found it once' })],
          asks: { 'save-note': { approval: 1, review: 1, mfa: 0 } },
        }),
        outcome('chaos-s1-02', {
          writes: [write('set-name', 1, { countedBy: 'probe', alreadySatisfied: true })],
        }),
      ]),
    );
    expect(text).toContain(
      "writes counted                by what each write step's probe found by the job's key (the final check, read from the ledger)",
    );
    expect(text).toContain('0 duplicated, 0 missing, 1 already satisfied, 0 not counted');
    expect(text).toMatch(/chaos-s1-01\s+save-note 1 approval, 1 review/);
    expect(text).toMatch(/chaos-s1-02\s+none/);
    expect(text).toMatch(/result\s+PASS/);
  });

  it('says the sites’ records counted them, and names a write it could not count', () => {
    const text = formatSummary(
      summary([
        outcome('chaos-s1-01', {
          writes: [write('save', null, { how: 'the job never reached the final check' })],
        }),
      ]),
    );
    expect(text).toContain("writes counted                by the sites' own records (GET /__admin/writes)");
    expect(text).toContain('NOT COUNTED chaos-s1-01 save: the job never reached the final check');
    expect(text).toMatch(/result\s+FAIL/);
  });
});
