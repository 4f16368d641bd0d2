/**
 * `invoice-handoff@1`: a customer's invoice PDF carried from the billing portal to their CRM
 * record. The billing session mounts the deployment's files volume read-write, so the PDF the
 * browser downloads lands in it; the step copies it into the job's folder and records its
 * name, size and SHA-256. The CRM session (another application, another session) uploads
 * those bytes, checked against that evidence, to the customer record: a write, with its
 * intent recorded first and a probe that looks for the attachment's hash on the record, so a
 * crash after the upload never uploads again. A crash between download and upload resumes at
 * the checkpoint: the download is not repeated.
 */
import { definePlaybook, type Playbook, signInStep } from 'belay/sdk';
import { billing as billingApplication, crm as crmApplication } from '../demo-sites.ts';
import type { InvoiceHandoffInputs } from './inputs.ts';
import { invoiceHandoffInputSchema } from './inputs.ts';
import { attachInvoice, downloadInvoice, verifyAttachment } from './steps.ts';

export type { InvoiceHandoffInputs } from './inputs.ts';
export { invoiceHandoffInputSchema } from './inputs.ts';

export const invoiceHandoffPlaybook: Playbook<InvoiceHandoffInputs> = definePlaybook<InvoiceHandoffInputs>({
  name: 'invoice-handoff',
  version: 1,
  description: "Download a customer's invoice PDF from billing and attach it to their CRM record.",
  inputSchema: invoiceHandoffInputSchema,
  applications: { billing: billingApplication, crm: crmApplication },
  files: { billing: 'read-write' },
  steps: [
    signInStep('billing-sign-in', 'billing', billingApplication),
    downloadInvoice,
    signInStep('crm-sign-in', 'crm', crmApplication),
    attachInvoice,
    verifyAttachment,
  ],
  exampleInputs: { customerEmail: 'mei.chen@cobalt.example', invoiceId: 'INV-5003-01' },
});

export default invoiceHandoffPlaybook;
