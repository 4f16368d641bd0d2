import { z } from 'zod';
import { ReceiptDocumentSchema } from '../../receipts/schema.ts';
import type { RegisterPaths } from '../openapi-kit.ts';

/** The receipt path of the OpenAPI document. */
export const registerReceiptPaths: RegisterPaths = (r, { security, json, error, common }) => {
  r.registerPath({
    method: 'get',
    path: '/jobs/{jobId}/receipt',
    summary: "The job's signed receipt: every ledger entry hash-chained, each write with what committed it",
    description:
      "Verify it offline with `npx belay receipt verify <file>`: the signature (ECDSA P-256, key id and public key inside), each entry against its hash, the chain from the first entry to the job's head, and each write with its evidence. Entries are redacted as `/jobs/{jobId}/ledger` shows them; a redacted value is replaced by its salted digest, so the hashes still check.",
    security,
    request: { params: z.object({ jobId: z.string().meta({ description: 'The job id.' }) }) },
    responses: {
      200: json(ReceiptDocumentSchema, 'The receipt (belay.receipt/1).'),
      404: error("No such job for this tenant (another tenant's reads the same)."),
      503: error('No receipt key is configured, or the key service did not answer; retry later.'),
      ...common,
    },
  });
};
