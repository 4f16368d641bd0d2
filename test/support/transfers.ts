/**
 * Transfers on the notes site approved on their effect (`transfer@1`, `transfer-agent@1` in
 * `test/fixtures/notes-playbooks/`): a job submitted for a payee and reference, and a wait until
 * it asks for approval, with what the approver is shown.
 */
import { connectAccount } from '../../lambdas/lib/api/accounts/manage.ts';
import type { EffectView } from '../../lambdas/lib/api/jobs/schemas.ts';
import { submitJob } from '../../lambdas/lib/api/jobs/submit.ts';
import { effectView } from '../../lambdas/lib/api/jobs/views.ts';
import type { Job, LedgerEntry } from '../../lambdas/lib/ledger/types.ts';
import type { JobsClient } from './engine-stack.ts';
import { PERSON } from './fixtures.ts';
import { waitForJob } from './jobs.ts';

/** The notes site's user the transfer jobs sign in as. */
export const TRANSFER_USER = { username: 'ada@example.com', password: 'notes-pass-1' };
/** The step of both transfer playbooks that is approved on its effect. */
export const TRANSFER_STEP = 'send-transfer';

/** Submits transfer jobs of one playbook, connecting the notes account once. */
export function transferSubmitter(
  engine: () => JobsClient,
  playbook: string,
): (jobId: string, reference: string) => Promise<void> {
  let account: string | undefined;
  return async (jobId, reference) => {
    const e = engine();
    account ??= (
      await connectAccount(e.api, PERSON, {
        application: 'notes',
        label: 'notes',
        credentials: TRANSFER_USER,
      })
    ).accountId;
    await submitJob(
      e.api,
      PERSON,
      { jobId, playbook, inputs: { payee: 'Grace Hopper', reference }, accounts: { notes: account } },
      undefined,
    );
  };
}

/** Waits until the job waits for approval of the transfer (`reason`); what the approver is shown, the job and its entries. */
export async function approvalShown(
  engine: JobsClient,
  jobId: string,
  reason: string,
  timeoutMs = 120_000,
): Promise<{ shown: EffectView; job: Job; entries: LedgerEntry[] }> {
  const { entries, job } = await waitForJob(
    engine,
    jobId,
    ({ job: j }) => j.status === 'WAITING_APPROVAL' && j.wait?.reason === reason,
    { timeoutMs, what: `waiting for approval (${reason})` },
  );
  const shown = effectView(entries, TRANSFER_STEP);
  if (!shown) throw new Error(`${jobId} shows no effect: ${JSON.stringify(job.wait)}`);
  return { shown, job, entries: [...entries] };
}

/** The value of the first field whose name matches. */
export const fieldValue = (shown: Pick<EffectView, 'fields'>, name: RegExp): string | undefined =>
  shown.fields.find((f) => name.test(f.name))?.value;
