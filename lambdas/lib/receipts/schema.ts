import { z } from 'zod';
import { RECEIPT_FORMAT, SIGNATURE_ALGORITHM } from './format.ts';

/**
 * The receipt format as a schema: what `belay receipt verify` reads before it checks anything,
 * and what the API's OpenAPI document says `GET /jobs/{jobId}/receipt` returns.
 */

const Json: z.ZodType<unknown> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(Json), z.record(z.string(), Json)]),
);
const DigestTree: z.ZodType<unknown> = z.lazy(() =>
  z.union([z.string(), z.array(DigestTree), z.record(z.string(), DigestTree)]),
);
const Hash = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in hex');

/**
 * The schema of a receipt whose JSON values and digest trees are checked by `json` and
 * `digests`: recursive schemas for `verify`, plain ones for the OpenAPI document (its
 * generator cannot walk a recursive schema).
 */
function receiptSchema(json: z.ZodType<unknown>, digests: z.ZodType<unknown>) {
  const EntryProofSchema = z.union([
    z.object({ salt: z.string() }).strict(),
    z.object({ salts: z.record(z.string(), z.string()), hidden: z.record(z.string(), digests) }).strict(),
  ]);

  const ReceiptEntrySchema = z
    .object({
      entryId: z.string(),
      type: z.string(),
      content: z.record(z.string(), json),
      proof: EntryProofSchema.optional(),
      prevHash: Hash.optional(),
      hash: Hash.optional(),
    })
    .strict();

  const CommittingRequestSchema = z
    .object({
      method: z.string(),
      url: z.string(),
      at: z.string(),
      status: z.number().optional(),
      location: z.string().optional(),
      contentType: z.string().optional(),
      excerpt: z.string().optional(),
      failed: z.literal(true).optional(),
    })
    .strict();

  const ReceiptWriteSchema = z
    .object({
      step: z.string(),
      stepIndex: z.number().optional(),
      entryId: z.string(),
      settledBy: z.enum(['request', 'probe', 'person', 'already-satisfied', 'unobserved']),
      requests: z.array(CommittingRequestSchema),
      requestsEntryId: z.string().optional(),
      evidence: z.record(z.string(), json),
      screenshot: z.object({ sha256: z.string(), bytes: z.number() }).strict().optional(),
    })
    .strict();

  return z
    .object({
      format: z.literal(RECEIPT_FORMAT),
      issuedAt: z.string(),
      job: z
        .object({
          tenantId: z.string(),
          jobId: z.string(),
          playbook: z.string(),
          status: z.string(),
          createdAt: z.string(),
          finishedAt: z.string().optional(),
          stepCount: z.number(),
          stepsCompleted: z.number(),
          chainHead: Hash.optional(),
        })
        .strict(),
      chain: z.object({ algorithm: z.string(), length: z.number(), unchained: z.array(z.string()) }).strict(),
      entries: z.array(ReceiptEntrySchema),
      writes: z.array(ReceiptWriteSchema),
      signature: z
        .object({
          algorithm: z.literal(SIGNATURE_ALGORITHM),
          keyId: z.string(),
          publicKey: z.string(),
          value: z.string(),
        })
        .strict(),
    })
    .strict();
}

/** A receipt, every value checked (what `belay receipt verify` reads). */
export const ReceiptSchema = receiptSchema(Json, DigestTree);

/** The receipt as the OpenAPI document describes it (values and digests as any JSON). */
export const ReceiptDocumentSchema = receiptSchema(
  z.unknown().meta({ description: 'A JSON value.' }),
  z.unknown().meta({ description: 'A digest (hex) or a tree of digests.' }),
);
