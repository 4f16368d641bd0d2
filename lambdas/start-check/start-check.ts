/**
 * A scheduled drift check (`belay:checks` in the CDK app, off by default): the schedule's rule
 * sends this function what to check, and it submits the check as the API would (`POST /jobs`
 * with `mode: check`), for the configured tenant and its accounts.
 */

import { type ApiDeps, findPlaybook } from '../lib/api/deps.ts';
import { submitJob } from '../lib/api/jobs/submit.ts';
import type { Principal } from '../lib/auth/api-keys.ts';

/** What a schedule's rule sends (the `belay:checks` entry of one playbook). */
export interface ScheduledCheck {
  playbook: string;
  tenant: string;
  /** application -> the tenant's connected account to check as. */
  accounts: Record<string, string>;
  /** The inputs; default the playbook's example inputs. */
  inputs?: Record<string, unknown>;
}

/** Submits the check; the submission's own checks apply (the playbook, the inputs, the tenant's accounts). */
export async function startScheduledCheck(deps: ApiDeps, check: ScheduledCheck): Promise<{ jobId: string }> {
  const principal: Principal = { tenantId: check.tenant, roles: ['submitter'], keyId: 'schedule' };
  const inputs =
    check.inputs ?? (findPlaybook(deps, check.playbook)?.exampleInputs as Record<string, unknown>) ?? {};
  const { job } = await submitJob(
    deps,
    principal,
    { playbook: check.playbook, inputs, accounts: check.accounts, mode: 'check' },
    undefined,
  );
  return { jobId: job.jobId };
}
