/**
 * What a person asks the checkout playbook for. No card details: the payment is a card
 * already saved on the shop account, named by its last four digits (what a person would say:
 * "pay with my Visa ending 4242"). Unknown fields are refused, so a card number cannot slip in.
 */
import { z } from 'zod';

const item = z
  .object({
    /** The product's SKU, as the shop shows it. */
    sku: z.string().regex(/^[A-Z0-9][A-Z0-9-]{1,39}$/, 'a product SKU such as MUG-ENAMEL-BLU'),
    quantity: z.number().int().min(1).max(10),
  })
  .strict();

export const checkoutInputSchema = z
  .object({
    /** What to search the catalogue for; the results must list both items. */
    search: z.string().trim().min(1).max(100),
    /** Item A and item B. */
    items: z
      .tuple([item, item])
      .refine(([a, b]) => a.sku !== b.sku, 'items A and B must be different products'),
    shippingAddress: z
      .object({
        name: z.string().trim().min(1).max(100),
        line1: z.string().trim().min(1).max(100),
        line2: z.string().trim().max(100).optional(),
        city: z.string().trim().min(1).max(100),
        postcode: z.string().trim().min(1).max(12),
        /** ISO 3166 alpha-2 (GB, IE, FR, DE, NL, US). */
        country: z.string().regex(/^[A-Z]{2}$/),
      })
      .strict(),
    shippingMethod: z.enum(['standard', 'express', 'next-day']),
    /** Optional promo code (e.g. SAVE10). */
    promoCode: z.string().trim().min(1).max(40).optional(),
    payment: z
      .object({
        /** Last four digits of a card saved on the shop account. */
        savedCardLast4: z.string().regex(/^\d{4}$/),
      })
      .strict(),
  })
  .strict();

export type CheckoutInputs = z.infer<typeof checkoutInputSchema>;
