/**
 * `npm run playbook -- validate`: every lint names its line and field and fails the file; every
 * shipped playbook passes; the command's exit status says which (no stack is started).
 */
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatValidated, validatePaths } from '../../../tools/playbook/validate.ts';
import { runToExit } from '../../support/processes.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const LINT = join(REPO, 'test', 'fixtures', 'lint-playbooks');

describe('playbook validate', () => {
  it('passes every shipped playbook and the test fixtures that are sound', async () => {
    const { results, missing } = await validatePaths([
      join(REPO, 'playbooks'),
      join(REPO, 'test', 'fixtures', 'notes-playbooks'),
    ]);
    expect(missing).toEqual([]);
    expect(results.filter((r) => r.problems.length > 0).map((r) => formatValidated([r]))).toEqual([]);
    expect(results.map((r) => r.id)).toEqual(
      expect.arrayContaining([
        'checkout@1',
        'crm-address@1',
        'crm-contact-decl@1',
        'invoice-handoff@1',
        'note@1',
      ]),
    );
  });

  it.each([
    ['probe-no-key', 'line 47, column 7: steps[1].probe: names neither an input nor {{idempotencyKey}}'],
    [
      'expect-no-job',
      'line 38, column 7: steps[1].expect: names no input, no earlier evidence and not {{idempotencyKey}}',
    ],
    ['broad-within', 'steps[1].actions[2].click.target.within: may find several elements'],
    ['bad-schema', 'steps[1].actions[2].click'],
  ])('fails %s, naming the line and the field', async (name, message) => {
    const { results } = await validatePaths([join(LINT, `${name}.playbook.yaml`)]);
    expect(results).toHaveLength(1);
    expect(results[0]?.problems.join('\n')).toContain(message);
    expect(formatValidated(results)).toMatch(new RegExp(`^FAIL  .*${name}\\.playbook\\.yaml`));
  });

  it('exits 0 on sound playbooks, 1 on a problem, 2 on a path that names none', async () => {
    const cli = (args: string[]) =>
      runToExit(['--import', 'tsx', 'tools/playbook/main.ts', 'validate', ...args], {
        cwd: REPO,
        timeoutMs: 60_000,
      });
    const ok = await cli(['playbooks/crm-address.playbook.yaml', 'test/fixtures/outside-playbooks']);
    expect(ok.code, ok.output).toBe(0);
    expect(ok.output).toContain('ok    playbooks/crm-address.playbook.yaml (crm-address@1, 3 steps)');
    expect(ok.output).toContain('(expenses@1, 3 steps)');
    const bad = await cli([LINT]);
    expect(bad.code, bad.output).toBe(1);
    expect(bad.output.match(/^FAIL /gm)).toHaveLength(4);
    const none = await cli(['no/such/folder']);
    expect(none.code).toBe(2);
    expect(none.output).toContain('no/such/folder: no such file or folder');
  }, 90_000);
});
