import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import type { Playbook, Step } from '../../../lambdas/lib/playbooks/contract.ts';
import { declarativeJsonSchema } from '../../../lambdas/lib/playbooks/declarative/json-schema.ts';
import {
  formatVerdicts,
  planScenarios,
  type RunOutcome,
  type Scenario,
  verdicts,
} from '../../../tools/playbook/verdicts.ts';

const step = (id: string, kind: 'read' | 'write'): Step =>
  ({ id, title: id, kind, app: 'site' }) as unknown as Step;
const playbook = {
  id: 'p@1',
  steps: [step('look', 'read'), step('save', 'write')],
  inputSchema: z.object({}),
} as unknown as Playbook;

let t = 0;
function entry(type: LedgerEntry['type'], stepId: string, more: Partial<LedgerEntry> = {}): LedgerEntry {
  t += 1000;
  return { type, step: stepId, at: new Date(Date.UTC(2026, 0, 1) + t).toISOString(), ...more } as LedgerEntry;
}

const completed = (reconciledSave: boolean, id = 'r1'): LedgerEntry[] => [
  entry('step-started', 'look'),
  entry('step-completed', 'look', { evidence: { title: 'x' } }),
  entry('step-started', 'save'),
  entry('step-completed', 'save', {
    evidence: reconciledSave ? { id, reconciled: true } : { id },
  }),
];

const run = (scenario: Scenario, over: Partial<RunOutcome> = {}, id = 'r1'): RunOutcome => ({
  scenario,
  status: 'SUCCEEDED',
  struck: scenario.fault !== 'clean' && scenario.fault !== 'repeat',
  entries: completed(scenario.fault === 'kill-after' && scenario.stepIndex === 1, id),
  seconds: 1,
  ...over,
});

/** Every run succeeds; each records a write of its own (the repeat's id differs from the clean run's). */
const allGood = (): RunOutcome[] =>
  planScenarios(playbook).map((s) => run(s, {}, s.fault === 'repeat' ? 'r2' : 'r1'));

describe('playbook test: verdicts', () => {
  it('plans a clean run, its repeat with the same inputs, and four faults per step (or per chosen step)', () => {
    expect(planScenarios(playbook)).toHaveLength(10);
    expect(planScenarios(playbook, ['save']).map((s) => `${s.fault}@${s.stepIndex ?? '-'}`)).toEqual([
      'clean@-',
      'repeat@-',
      'kill-before@1',
      'kill-mid@1',
      'kill-after@1',
      'browser-lost@1',
    ]);
  });

  it('plans a dropped answer for each write behind a proxy, after every other run', () => {
    const plan = planScenarios(playbook, undefined, (app) => app === 'site');
    expect(plan).toHaveLength(11);
    expect(plan.at(-1)).toEqual({ fault: 'drop-response', stepIndex: 1 });
    expect(planScenarios(playbook, undefined, () => false).some((s) => s.fault === 'drop-response')).toBe(
      false,
    );
  });

  it('passes a write that commits once when its answer is dropped, and fails one the site committed twice', () => {
    const withDrop = (commits: number): RunOutcome[] => [
      ...allGood(),
      run({ fault: 'drop-response', stepIndex: 1 }, { commits }),
    ];
    const once = verdicts(playbook, withDrop(1)).find((v) => v.id === 'save');
    expect(once?.drop).toEqual({ ok: true });
    expect(once?.safe).toBe(true);
    const twice = verdicts(playbook, withDrop(2));
    expect(twice.find((v) => v.id === 'save')?.safe).toBe(false);
    expect(formatVerdicts('p@1', twice)).toContain(
      'save: its answer dropped after the site committed, the site committed 2 writes in the step (SUCCEEDED)',
    );
    // A read has no drop run; a write whose step sent no write request is not judged by it.
    expect(verdicts(playbook, withDrop(1)).find((v) => v.id === 'look')?.drop).toEqual({ na: 'a read' });
    const unsent = verdicts(playbook, [
      ...allGood(),
      run({ fault: 'drop-response', stepIndex: 1 }, { struck: false, commits: 0 }),
    ]);
    expect(unsent.find((v) => v.id === 'save')?.drop).toEqual({ na: 'the step sent no write request' });
  });

  it('counts only the committing request when the page sends its own, and names both', () => {
    const runs = [
      ...allGood(),
      run(
        { fault: 'drop-response', stepIndex: 1 },
        { commits: 1, commitsAs: 'POST /api/notes', background: '9 POST /api/heartbeat' },
      ),
    ];
    const save = verdicts(playbook, runs).find((v) => v.id === 'save');
    expect(save?.drop).toEqual({ ok: true, note: 'background: 9 POST /api/heartbeat' });
    const twice = verdicts(playbook, [
      ...allGood(),
      run({ fault: 'drop-response', stepIndex: 1 }, { commits: 2, commitsAs: 'POST /api/notes' }),
    ]);
    expect(formatVerdicts('p@1', twice)).toContain(
      'the site committed 2 writes (POST /api/notes) in the step',
    );
  });

  it('fails a write that creates whose check already held on the repeat, saying what to change', () => {
    const runs = allGood().map((r) =>
      r.scenario.fault === 'repeat'
        ? {
            ...r,
            entries: [
              entry('step-completed', 'look', { evidence: { title: 'x' } }),
              entry('step-started', 'save', { detail: { heldBefore: true } }),
              entry('step-unconfirmed', 'save'),
              entry('step-completed', 'save', { evidence: { id: 'r2', reconciled: true } }),
            ],
          }
        : r,
    );
    const save = verdicts(playbook, runs).find((v) => v.id === 'save');
    expect(save?.safe).toBe(false);
    expect(formatVerdicts('p@1', verdicts(playbook, runs))).toContain(
      "save: its check already holds before the action (the clean run's record satisfies it)",
    );
    // The same, with the field that makes its evidence new named: the engine can tell.
    const named = {
      ...playbook,
      steps: [step('look', 'read'), { ...step('save', 'write'), newEvidence: ['id'] }],
    };
    expect(verdicts(named as Playbook, runs).find((v) => v.id === 'save')?.own).toEqual({
      ok: true,
      note: 'held before the action; id changed',
    });
  });

  it("fails a write whose evidence is not the record the final check's probe finds by the key", () => {
    const runs = allGood().map((r) =>
      r.scenario.fault === 'clean'
        ? {
            ...r,
            entries: [
              ...r.entries,
              entry('succeeded', 'save', { detail: { verified: { save: { id: 'r9' } } } }),
            ],
          }
        : r,
    );
    expect(formatVerdicts('p@1', verdicts(playbook, runs))).toContain(
      'save: its evidence names another record than the one its probe finds by the key (id, run clean)',
    );
  });

  it('fails a write that creates when the clean run and its repeat recorded the same evidence', () => {
    const same = planScenarios(playbook).map((s) => run(s));
    expect(formatVerdicts('p@1', verdicts(playbook, same))).toContain(
      'save: the clean run and its repeat recorded the same evidence',
    );
  });

  it('calls every step safe when reads converge, the probe finds the write, restore works and verify gives evidence', () => {
    const list = verdicts(playbook, allGood());
    expect(list.map((v) => [v.id, v.safe, v.ms])).toEqual([
      ['look', true, 1000],
      ['save', true, 1000],
    ]);
    expect(formatVerdicts('p@1', list)).toContain('every step is safe to retry (2 steps)');
  });

  it('fails a write whose probe said absent after its action committed, naming the step', () => {
    const runs = allGood().map((r) =>
      r.scenario.fault === 'kill-after' && r.scenario.stepIndex === 1
        ? {
            ...r,
            entries: [...completed(false), entry('reconciled', 'save', { detail: { probe: 'absent' } })],
          }
        : r,
    );
    const list = verdicts(playbook, runs);
    expect(list.find((v) => v.id === 'save')?.safe).toBe(false);
    const text = formatVerdicts('p@1', list);
    expect(text).toContain('NOT safe to retry: save');
    expect(text).toContain('save: killed after its action, the probe said absent: it acted twice');
  });

  it('fails a write that completed after the kill without its probe', () => {
    const runs = allGood().map((r) =>
      r.scenario.fault === 'kill-after' && r.scenario.stepIndex === 1
        ? { ...r, entries: completed(false) }
        : r,
    );
    expect(formatVerdicts('p@1', verdicts(playbook, runs))).toContain('completed without its probe');
  });

  it('fails a read that does not converge when run again, and a step without evidence', () => {
    const runs = allGood().map((r) => {
      if (r.scenario.fault === 'kill-after' && r.scenario.stepIndex === 0)
        return { ...r, status: 'FAILED', detail: 'retry-budget-exhausted' };
      if (r.scenario.fault === 'clean')
        return {
          ...r,
          entries: completed(false).map((e) => (e.step === 'look' ? { ...e, evidence: {} } : e)),
        };
      return r;
    });
    const text = formatVerdicts('p@1', verdicts(playbook, runs));
    expect(text).toContain('look: verify gave no evidence');
    expect(text).toContain('look: re-run after kill-after: FAILED (retry-budget-exhausted)');
  });

  it('does not judge a fault that never struck (a step with no middle)', () => {
    const runs = allGood().map((r) =>
      r.scenario.fault === 'kill-mid' ? { ...r, struck: false, status: 'FAILED' } : r,
    );
    expect(verdicts(playbook, runs).every((v) => v.safe)).toBe(true);
  });
});

describe('the published JSON Schema of the declarative form', () => {
  it('is current (regenerate with npm run -s playbook -- schema > playbooks/playbook.schema.json)', () => {
    const file = join(import.meta.dirname, '..', '..', '..', 'playbooks', 'playbook.schema.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(declarativeJsonSchema());
  });
});
