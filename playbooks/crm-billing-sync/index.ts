/**
 * `crm-billing-sync@1`: a customer's new address goes into the CRM record and the billing
 * account. Two writes in two applications, each sent with its step's idempotency key and
 * probed on the application's own change log; then each application is read back.
 *
 * "Verify both" is two read steps (one per application), because a step works in one
 * application: the engine gives each application its own browser session and allowlist.
 */
import { definePlaybook, type Playbook, signInStep } from 'belay/sdk';
import { billing as billingApplication, crm as crmApplication } from '../demo-sites.ts';
import type { CrmBillingSyncInputs } from './inputs.ts';
import { crmBillingSyncInputSchema } from './inputs.ts';
import { updateBillingAddress, updateCrmCustomer, verifyBillingAccount, verifyCrmRecord } from './steps.ts';

export type { CrmBillingSyncInputs } from './inputs.ts';
export { crmBillingSyncInputSchema } from './inputs.ts';

export const crmBillingSyncPlaybook: Playbook<CrmBillingSyncInputs> = definePlaybook<CrmBillingSyncInputs>({
  name: 'crm-billing-sync',
  version: 1,
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
  exampleInputs: {
    customerEmail: 'mei.chen@cobalt.example',
    address: { line1: '77 Temple Quay', city: 'Bristol', postcode: 'BS1 6DZ', country: 'GB' },
  },
});

export default crmBillingSyncPlaybook;
