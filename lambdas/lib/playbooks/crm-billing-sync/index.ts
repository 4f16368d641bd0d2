/**
 * `crm-billing-sync@1`: a customer's new address goes into the CRM record and the billing
 * account. Two writes in two applications, each sent with its step's idempotency key and
 * probed on the application's own change log; then each application is read back.
 *
 * "Verify both" is two read steps (one per application), because a step works in one
 * application: the engine gives each application its own browser session and allowlist.
 */
import { billingApplication } from '../apps/billing.ts';
import { crmApplication } from '../apps/crm.ts';
import type { Playbook } from '../contract.ts';
import { signInStep } from '../sign-in-step.ts';
import type { CrmBillingSyncInputs } from './inputs.ts';
import { crmBillingSyncInputSchema } from './inputs.ts';
import { updateBillingAddress, updateCrmCustomer, verifyBillingAccount, verifyCrmRecord } from './steps.ts';

export type { CrmBillingSyncInputs } from './inputs.ts';
export { crmBillingSyncInputSchema } from './inputs.ts';

export const crmBillingSyncPlaybook: Playbook<CrmBillingSyncInputs> = {
  name: 'crm-billing-sync',
  version: 1,
  id: 'crm-billing-sync@1',
  description: "Change a customer's address in the CRM and in billing, then check both show it.",
  inputSchema: crmBillingSyncInputSchema,
  applications: { crm: crmApplication, billing: billingApplication },
  steps: [
    signInStep('crm-sign-in', 'crm', crmApplication),
    signInStep('billing-sign-in', 'billing', billingApplication),
    updateCrmCustomer,
    updateBillingAddress,
    verifyCrmRecord,
    verifyBillingAccount,
  ],
};
