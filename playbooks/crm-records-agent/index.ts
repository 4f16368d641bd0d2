/**
 * `crm-records-agent@1`: fourteen steps in the CRM, thirteen of them agent steps. After the
 * sign-in, a model (by default the local rule-based policy) edits five customers' records from
 * the job's inputs: each customer's contact name and phone, then the email, then (for the
 * first three) the notes, one write per step. Each action the model chooses is in the ledger
 * before it runs. Every write is verified on the saved record and probed on the record page:
 * done when it shows the step's values, else absent.
 *
 * The benchmark's `agent` section runs it (a 14-step job the local policy can drive: it fills
 * labelled form fields and clicks a form's submit button, which is what these steps ask). It
 * reads the record the way a person does (the terms of its definition list) and tells a
 * signed-in page by its "Sign out" button, so it runs the same on the CRM's changed layout.
 */
import {
  agentStep,
  appUrl,
  definePlaybook,
  EVIDENCE_TIMEOUT_MS,
  formSignIn,
  goto,
  type Playbook,
  type Step,
  type StepContext,
  signInStep,
} from 'belay/sdk';
import type { Page } from 'playwright-core';
import { z } from 'zod';

const record = z
  .object({
    /** The CRM's customer id (`C-1001`). */
    customerId: z.string().regex(/^C-\d{4}$/),
    contactName: z.string().trim().min(1).max(100),
    phone: z.string().regex(/^\+?[\d ()-]{6,20}$/),
    email: z.string().email().max(100),
    notes: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

export const crmRecordsAgentInputSchema = z
  .object({ c1: record, c2: record, c3: record, c4: record, c5: record })
  .strict()
  .superRefine((inputs, issue) => {
    for (const key of ['c1', 'c2', 'c3'] as const)
      if (!inputs[key].notes) issue.addIssue({ code: 'custom', path: [key, 'notes'], message: 'required' });
  });

export type CrmRecordsAgentInputs = z.infer<typeof crmRecordsAgentInputSchema>;
type Customer = keyof CrmRecordsAgentInputs;
type Ctx = StepContext<CrmRecordsAgentInputs>;

/** The CRM, told signed in by its "Sign out" button and signed out by its "Sign in" link (both layouts have them). */
export const crmByRole = formSignIn({
  name: 'crm',
  signInPath: '/signin',
  returnParam: 'next',
  username: 'form[data-form="signin"] input[name="username"]',
  password: 'form[data-form="signin"] input[name="password"]',
  submit: 'form[data-form="signin"] [type="submit"]',
  signedIn: { role: 'button', name: 'Sign out' },
  signedOut: { role: 'link', name: 'Sign in' },
  error: '[role="alert"]',
});

/** What a step sets: the record's term (as the record page shows it), its form label and input key. */
interface Part {
  term: string;
  label: string;
  key: 'contactName' | 'phone' | 'email' | 'notes';
}

const CONTACT: Part[] = [
  { term: 'Contact', label: 'Contact name', key: 'contactName' },
  { term: 'Phone', label: 'Phone', key: 'phone' },
];
const EMAIL: Part[] = [{ term: 'Email', label: 'Email', key: 'email' }];
const NOTES: Part[] = [{ term: 'Notes', label: 'Notes', key: 'notes' }];

/** The text the record page shows for `term` (its definition list), or undefined when the page shows no record. */
async function shownTerm(page: Page, term: string): Promise<string | undefined> {
  const dd = page.locator(`xpath=//dl/dt[normalize-space()="${term}"]/following-sibling::dd[1]`).first();
  if (!(await dd.isVisible({ timeout: EVIDENCE_TIMEOUT_MS }).catch(() => false))) return undefined;
  return ((await dd.textContent()) ?? '').trim();
}

/** The record shows every part's value: the evidence, or why not. */
async function recordShows(
  page: Page,
  ctx: Ctx,
  customer: Customer,
  parts: readonly Part[],
): Promise<{ evidence: Record<string, string> } | 'no-record' | 'differs'> {
  const evidence: Record<string, string> = { customerId: ctx.inputs[customer].customerId };
  for (const part of parts) {
    const shown = await shownTerm(page, part.term);
    if (shown === undefined) return 'no-record';
    if (shown !== ctx.inputs[customer][part.key]) return 'differs';
    evidence[part.key] = shown;
  }
  return { evidence };
}

const recordPath = (ctx: Ctx, customer: Customer): string =>
  `/customers/${encodeURIComponent(ctx.inputs[customer].customerId)}`;

function editStep(customer: Customer, what: 'contact' | 'email' | 'notes'): Step<CrmRecordsAgentInputs> {
  const parts = what === 'contact' ? CONTACT : what === 'email' ? EMAIL : NOTES;
  const n = customer.slice(1);
  const sets = parts.map((p) => `the ${p.label.toLowerCase()} to "{{inputs.${customer}.${p.key}}}"`);
  return agentStep<CrmRecordsAgentInputs>({
    id: `${customer}-${what}`,
    title: `Customer ${n}: set the ${parts.map((p) => p.label.toLowerCase()).join(' and ')} (agent)`,
    kind: 'write',
    app: 'crm',
    application: crmByRole,
    start: (ctx) => `${recordPath(ctx, customer)}/edit`,
    goal: `In the CRM, set ${sets.join(' and ')} of customer {{inputs.${customer}.customerId}}, then save the record.`,
    fields: Object.fromEntries(parts.map((p) => [p.label, `{{inputs.${customer}.${p.key}}}`])),
    maxActions: 6,
    verify: async (page, ctx) => {
      if (!/[?&]saved=\d+/.test(page.url())) return null;
      const shown = await recordShows(page, ctx, customer, parts);
      return typeof shown === 'object' ? shown.evidence : null;
    },
    probe: async (page, ctx) => {
      await goto(page, appUrl(ctx, 'crm', recordPath(ctx, customer)));
      const shown = await recordShows(page, ctx, customer, parts);
      if (shown === 'no-record') return { status: 'unknown', detail: 'the record page shows no record' };
      return shown === 'differs' ? { status: 'absent' } : { status: 'done', evidence: shown.evidence };
    },
  });
}

/** The thirteen agent steps, in order: steps 2 to 14 of the job (step 12 is `c4-email`). */
export const RECORD_STEPS: readonly Step<CrmRecordsAgentInputs>[] = [
  editStep('c1', 'contact'),
  editStep('c1', 'email'),
  editStep('c1', 'notes'),
  editStep('c2', 'contact'),
  editStep('c2', 'email'),
  editStep('c2', 'notes'),
  editStep('c3', 'contact'),
  editStep('c3', 'email'),
  editStep('c3', 'notes'),
  editStep('c4', 'contact'),
  editStep('c4', 'email'),
  editStep('c5', 'contact'),
  editStep('c5', 'email'),
];

export const crmRecordsAgentPlaybook: Playbook<CrmRecordsAgentInputs> = definePlaybook<CrmRecordsAgentInputs>(
  {
    name: 'crm-records-agent',
    version: 1,
    description:
      "Thirteen agent steps edit five CRM customers' contacts, phones, emails and notes from the job's inputs.",
    inputSchema: crmRecordsAgentInputSchema,
    exampleInputs: {
      c1: {
        customerId: 'C-1001',
        contactName: 'Jane Doe-Marsh',
        phone: '+44 20 7946 0101',
        email: 'jane.marsh@acme.example',
        notes: 'Prefers email before noon',
      },
      c2: {
        customerId: 'C-1002',
        contactName: 'Omar Haddad-Reyes',
        phone: '+44 161 496 0102',
        email: 'omar.reyes@bluebell.example',
        notes: 'Deliveries to the side door',
      },
      c3: {
        customerId: 'C-1003',
        contactName: 'Mei Chen-Ward',
        phone: '+44 117 496 0103',
        email: 'mei.ward@cobalt.example',
        notes: 'Invoices quarterly',
      },
      c4: {
        customerId: 'C-1004',
        contactName: 'Siobhan Kelly-Byrne',
        phone: '+353 1 555 0104',
        email: 'siobhan.byrne@dunmore.example',
      },
      c5: {
        customerId: 'C-1005',
        contactName: 'Tom Baker-Lane',
        phone: '+44 113 496 0105',
        email: 'tom.lane@elmoak.example',
      },
    },
    applications: { crm: crmByRole },
    steps: [signInStep('crm-sign-in', 'crm', crmByRole), ...RECORD_STEPS],
  },
);

export default crmRecordsAgentPlaybook;
