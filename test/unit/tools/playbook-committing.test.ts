import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../../lambdas/lib/ledger/types.ts';
import type { Playbook } from '../../../lambdas/lib/playbooks/contract.ts';
import { committingRequests, pathPattern } from '../../../tools/playbook/committing.ts';
import type { RunOutcome } from '../../../tools/playbook/verdicts.ts';

describe('playbook test: the committing request of each write', () => {
  it.each([
    ['/reports', '/reports', true],
    ['/reports/r1/lines', '/reports/r16/lines', true],
    ['/reports/r1/lines', '/reports/r16/notes', false],
    ['/api/v2/items', '/api/v3/items', true],
    ['/a.b', '/aXb', false],
  ])('%s matches %s in another run: %s', (recorded, other, want) => {
    expect(pathPattern(recorded).test(other)).toBe(want);
  });

  it("takes the step's commits first, else the clean run's recorded request, with a name for people", () => {
    const playbook = {
      steps: [
        { id: 'look', kind: 'read' },
        { id: 'save', kind: 'write', commits: { method: 'POST', path: '^/api/notes$' } },
        { id: 'add', kind: 'write' },
        { id: 'never', kind: 'write' },
      ],
    } as unknown as Playbook;
    const clean = {
      entries: [
        {
          type: 'step-completed',
          step: 'add',
          detail: {
            writeGuard: { commits: [{ method: 'POST', url: 'http://127.0.0.1:1/reports/r1/lines' }] },
          },
        } as unknown as LedgerEntry,
      ],
    } as RunOutcome;
    const found = committingRequests(playbook, clean);
    expect(Object.keys(found)).toEqual(['1', '2']);
    expect(found[1]?.label).toBe('POST ^/api/notes$');
    expect(found[1]?.matches('POST', '/api/notes')).toBe(true);
    expect(found[1]?.matches('POST', '/api/heartbeat')).toBe(false);
    expect(found[2]?.label).toBe('POST /reports/{id}/lines');
    expect(found[2]?.matches('POST', '/reports/r9/lines')).toBe(true);
    expect(found[2]?.matches('PUT', '/reports/r9/lines')).toBe(false);
  });
});
