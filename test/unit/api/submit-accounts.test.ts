import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Account } from '../../../lambdas/lib/accounts/types.ts';
import type { ApiDeps } from '../../../lambdas/lib/api/deps.ts';
import { submitJob } from '../../../lambdas/lib/api/jobs/submit.ts';
import type { Principal } from '../../../lambdas/lib/auth/api-keys.ts';
import type { JobRequest } from '../../../lambdas/lib/ledger/types.ts';
import type { Playbook } from '../../../lambdas/lib/playbooks/contract.ts';
import { createPlaybookRegistry } from '../../../lambdas/lib/playbooks/registry.ts';

const PRINCIPAL: Principal = { tenantId: 'acme', roles: ['submitter'], keyId: 'blk_submitter001' };

const noop = async (): Promise<never> => {
  throw new Error('not called');
};
const CRM = {
  name: 'crm',
  isSignedOut: async () => false,
  signIn: noop,
  submitOneTimeCode: noop,
} as unknown as Playbook['applications'][string];
const PLAYBOOK = {
  id: 'sync@1',
  name: 'sync',
  version: 1,
  description: 'Reads a record.',
  inputSchema: z.object({}).strict(),
  applications: { crm: CRM },
  steps: [
    {
      id: 'read-record',
      title: 'Read the record',
      kind: 'read',
      app: 'crm',
      precondition: noop,
      restore: noop,
      run: noop,
      verify: noop,
    },
  ],
} as unknown as Playbook;

const ACCOUNT: Account = {
  tenantId: 'acme',
  accountId: 'acct_crm_1',
  application: 'crm',
  label: 'CRM',
  profileName: 'p',
  status: 'connected',
  createdAt: '2026-01-01T00:00:00.000Z',
};

/** The request the ledger is asked to create (the sentinel error stops submission there). */
async function submitted(
  accounts: Record<string, string> | undefined,
): Promise<{ request: JobRequest; gets: string[] }> {
  const gets: string[] = [];
  let request: JobRequest | undefined;
  const stop = new Error('created');
  const deps = {
    engine: {
      playbooks: createPlaybookRegistry([{ playbook: PLAYBOOK, source: 'test' }]),
      clock: () => new Date('2026-01-02T00:00:00.000Z'),
      ledger: {
        createJob: async (_t: string, _j: string, r: JobRequest) => {
          request = r;
          throw stop;
        },
      },
    },
    accounts: {
      list: async () => [ACCOUNT],
      get: async (_t: string, id: string) => {
        gets.push(id);
        return id === ACCOUNT.accountId ? ACCOUNT : null;
      },
    },
  } as unknown as ApiDeps;
  await expect(
    submitJob(
      deps,
      PRINCIPAL,
      { playbook: 'sync@1', inputs: {}, ...(accounts ? { accounts } : {}) },
      'job-1',
    ),
  ).rejects.toBe(stop);
  if (!request) throw new Error('createJob was not called');
  return { request, gets };
}

describe('Function: submitJob (accounts)', () => {
  it("takes an application's only connected account from the list, without reading it again", async () => {
    const { request, gets } = await submitted(undefined);
    expect(request.accounts).toEqual({ crm: 'acct_crm_1' });
    expect(gets).toEqual([]);
  });

  it('reads a named account once', async () => {
    const { request, gets } = await submitted({ crm: 'acct_crm_1' });
    expect(request.accounts).toEqual({ crm: 'acct_crm_1' });
    expect(gets).toEqual(['acct_crm_1']);
  });
});
