/**
 * `crm-contact-agent@1`: the CRM update done by an agent step. A model (by default the local
 * rule-based policy) fills the customer's edit form from the job's inputs and saves it; each
 * action it chooses is in the ledger before it runs. The write is probed on the record itself:
 * done when the record shows the new contact and phone, else absent.
 */
import {
  agentStep,
  appUrl,
  definePlaybook,
  EVIDENCE_TIMEOUT_MS,
  goto,
  type Playbook,
  type StepContext,
  signInStep,
  tid,
} from 'belay/sdk';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { crm as crmApplication } from '../demo-sites.ts';

export const crmContactAgentInputSchema = z
  .object({
    /** The CRM's customer id (`C-1001`). */
    customerId: z.string().regex(/^C-\d{4}$/),
    contactName: z.string().trim().min(1).max(100),
    phone: z.string().regex(/^\+?[\d ()-]{6,20}$/),
  })
  .strict();

export type CrmContactAgentInputs = z.infer<typeof crmContactAgentInputSchema>;

type Ctx = StepContext<CrmContactAgentInputs>;

/** The record's contact and phone as its page shows them, or undefined when the page has no record. */
async function shown(page: Page): Promise<{ contact: string; phone: string } | undefined> {
  const contact = page.locator(tid('record-contact')).first();
  if (!(await contact.isVisible({ timeout: EVIDENCE_TIMEOUT_MS }).catch(() => false))) return undefined;
  return {
    contact: ((await contact.textContent()) ?? '').trim(),
    phone: ((await page.locator(tid('record-phone')).first().textContent()) ?? '').trim(),
  };
}

const matches = (s: { contact: string; phone: string } | undefined, ctx: Ctx): boolean =>
  s !== undefined && s.contact === ctx.inputs.contactName && s.phone === ctx.inputs.phone;

export const updateContactByAgent = agentStep<CrmContactAgentInputs>({
  id: 'update-contact',
  title: "Update the customer's contact (agent)",
  kind: 'write',
  app: 'crm',
  application: crmApplication,
  start: (ctx) => `/customers/${ctx.inputs.customerId}/edit`,
  goal: 'In the CRM, set the contact name of customer {{inputs.customerId}} to "{{inputs.contactName}}" and the phone to "{{inputs.phone}}", then save the record.',
  fields: { 'Contact name': '{{inputs.contactName}}', Phone: '{{inputs.phone}}' },
  maxActions: 6,
  verify: async (page, ctx) => {
    if (!/[?&]saved=\d+/.test(page.url())) return null;
    const s = await shown(page);
    return s && matches(s, ctx)
      ? { customerId: ctx.inputs.customerId, contact: s.contact, phone: s.phone }
      : null;
  },
  probe: async (page, ctx) => {
    await goto(page, appUrl(ctx, 'crm', `/customers/${ctx.inputs.customerId}`));
    const s = await shown(page);
    if (s === undefined) return { status: 'unknown', detail: 'the record page shows no record' };
    return matches(s, ctx)
      ? {
          status: 'done',
          evidence: { customerId: ctx.inputs.customerId, contact: s.contact, phone: s.phone },
        }
      : { status: 'absent' };
  },
});

export const crmContactAgentPlaybook: Playbook<CrmContactAgentInputs> = definePlaybook<CrmContactAgentInputs>(
  {
    name: 'crm-contact-agent',
    version: 1,
    description: "An agent step updates a CRM customer's contact name and phone from the job's inputs.",
    inputSchema: crmContactAgentInputSchema,
    exampleInputs: { customerId: 'C-1003', contactName: 'Mei Chen-Ward', phone: '+44 117 496 0999' },
    applications: { crm: crmApplication },
    steps: [signInStep('crm-sign-in', 'crm', crmApplication), updateContactByAgent],
  },
);

export default crmContactAgentPlaybook;
