/**
 * A chaos run's setup without a stack: its options checked against the playbooks before anything
 * starts (each problem named by its option, no value echoed), and what it says of a site that
 * answers only part of the admin contract (a fake stack handle: no network).
 */
import { describe, expect, it } from 'vitest';
import type { SiteAdmin } from '../../../demo/sites/admin-client.ts';
import { AdminRequestError } from '../../../demo/sites/errors.ts';
import { loadRunPlaybooks, runSites } from '../../../tools/chaos/setup.ts';
import type { StackHandle } from '../../../tools/chaos/stack-process.ts';
import { OptionError } from '../../../tools/playbook/options.ts';

describe('Function: loadRunPlaybooks', () => {
  it('runs every playbook of the repository by default and passes folders and applications to the stack', async () => {
    const run = await loadRunPlaybooks({ applications: '{"crm2":{"baseUrl":"http://127.0.0.1:9802"}}' });
    expect(run.playbooks).toEqual(run.catalog.shipped());
    expect(run.playbooks).toEqual(
      expect.arrayContaining(['checkout@1', 'crm-billing-sync@1', 'crm-address@1']),
    );
    expect(run.stackArgs).toEqual(['--applications', '{"crm2":{"baseUrl":"http://127.0.0.1:9802"}}']);
  });

  it('takes one inputs object or a list per playbook', async () => {
    const run = await loadRunPlaybooks({
      playbooks: ['crm-contact-agent@1'],
      inputs: {
        'crm-contact-agent@1': [
          { customerId: 'C-1001', contactName: 'A', phone: '+44 117 496 0001' },
          { customerId: 'C-1002', contactName: 'B', phone: '+44 117 496 0002' },
        ],
      },
    });
    expect(run.inputs['crm-contact-agent@1']).toHaveLength(2);
  });

  it.each([
    [
      'an unknown playbook',
      { playbooks: ['nope@1'] },
      /^--playbook: nope@1 is in none of the playbook folders/,
    ],
    [
      'inputs of a playbook the run does not have',
      { playbooks: ['checkout@1'], inputs: { 'crm-address@1': {} } },
      /^--inputs: crm-address@1 is not a playbook of the run/,
    ],
    [
      'inputs that do not fit',
      {
        playbooks: ['crm-address@1'],
        inputs: { 'crm-address@1': { customerEmail: 'top-secret-value', city: 7 } },
      },
      /^--inputs: crm-address@1 do not fit its input schema at (\w+, )*customerEmail(, \w+)*$/,
    ],
    [
      'an account of an application no playbook uses',
      { accounts: [{ app: 'wiki', accountId: 'a' }] },
      /^--account: wiki: no playbook/,
    ],
    ['applications that are not JSON', { applications: '{nope' }, /^--applications: is not valid JSON/],
  ])('refuses %s, naming the option', async (_what, selection, message) => {
    const err = (await loadRunPlaybooks(selection).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(OptionError);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('top-secret-value');
  });
});

/** A stack handle whose one application answers only what it is given. */
function handleWith(answers: { writes?: unknown; faults?: unknown; expired?: number }): StackHandle {
  const no = (): Promise<never> => Promise.reject(new AdminRequestError('x', 404, 'not found'));
  const yes = (v: unknown) => (v === undefined ? no : () => Promise.resolve(v));
  const admin = {
    writes: yes(answers.writes),
    faults: yes(answers.faults),
    setFaults: yes(answers.faults),
    expireSessions: yes(answers.expired === undefined ? undefined : { expired: answers.expired }),
  } as unknown as SiteAdmin;
  return {
    applications: { crm: 'http://127.0.0.1:9802' },
    site: () => admin,
  } as unknown as StackHandle;
}

describe('Function: runSites', () => {
  it('says which faults a site cannot take, and takes its writes when it lists them', async () => {
    const run = await loadRunPlaybooks({ playbooks: ['crm-address@1'] });
    const lines: string[] = [];
    const caps = await runSites(handleWith({ writes: { items: [], countsByKey: {} } }), run, (l) =>
      lines.push(l),
    );
    expect(caps).toEqual({ crm: { records: true, faults: false, sessions: false } });
    expect(lines).toEqual([
      'crm (http://127.0.0.1:9802) cannot take sign-in-expiry, drop-write-response, drop-write-no-byte, layout-change: it does not answer POST /__admin/sessions/expire or /__admin/faults (so its de-duplication is its own)',
    ]);
  });

  it('takes a site its jobs write to that lists no committed writes, and says how its writes are counted', async () => {
    const run = await loadRunPlaybooks({ playbooks: ['crm-address@1'] });
    const lines: string[] = [];
    const caps = await runSites(handleWith({}), run, (l) => lines.push(l));
    expect(caps).toEqual({ crm: { records: false, faults: false, sessions: false } });
    expect(lines).toContain(
      "crm (http://127.0.0.1:9802) lists no committed writes (GET /__admin/writes): its writes are counted by what each write step's probe finds by the job's key (the final check's, in the job's ledger)",
    );
  });
});
