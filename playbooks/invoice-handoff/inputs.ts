/** What `invoice-handoff@1` is asked for: the customer (by email) and the invoice to carry. */
import { z } from 'zod';

export const invoiceHandoffInputSchema = z
  .object({
    /** The customer's email: the billing account's and the CRM record's. */
    customerEmail: z.email(),
    /** The billing invoice to attach to the CRM record (`INV-5003-01`). */
    invoiceId: z.string().regex(/^INV-\d{4}-\d{2}$/),
  })
  .strict();

export type InvoiceHandoffInputs = z.infer<typeof invoiceHandoffInputSchema>;
