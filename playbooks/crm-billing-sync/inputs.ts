/** What a person asks `crm-billing-sync@1` for: a customer (by email) and their new address. */
import { z } from 'zod';

export const crmBillingSyncInputSchema = z
  .object({
    /** The customer's email in the CRM, which is also the billing account's email. */
    customerEmail: z.email(),
    /** The new address: the CRM record's address and the billing address. */
    address: z
      .object({
        line1: z.string().trim().min(1).max(100),
        line2: z.string().trim().max(100).optional(),
        city: z.string().trim().min(1).max(100),
        postcode: z.string().trim().min(1).max(12),
        /** ISO 3166 alpha-2 (GB, IE, FR, DE, NL, US). */
        country: z.string().regex(/^[A-Z]{2}$/),
      })
      .strict(),
    /** A new phone number for the CRM record, if it changes too. */
    phone: z
      .string()
      .regex(/^\+?[\d ()-]{6,20}$/)
      .optional(),
  })
  .strict();

export type CrmBillingSyncInputs = z.infer<typeof crmBillingSyncInputSchema>;
