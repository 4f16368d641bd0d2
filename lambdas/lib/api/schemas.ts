import { z } from 'zod';
import type { Cost } from '../ledger/types.ts';
import type { FieldIssue } from './errors.ts';

/**
 * What every use case of the API shares in its schemas: ids, costs, the error body, and the
 * field issues of a failed parse. Each use case keeps its own request and response schemas
 * (`jobs/schemas.ts`, `accounts/schemas.ts`, ...), and `openapi.ts` generates the document
 * from the very same objects (ids from `.meta`).
 */

/** Job ids, account ids: what the ledger accepts as an id. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const Id = z.string().regex(ID_PATTERN, 'use 1-64 characters of A-Z, a-z, 0-9, _ and -');

/** The components of a cost (the ledger's `Cost`), for every schema that shows one. */
export const COST_COMPONENTS = {
  browserSeconds: z.number(),
  lambdaInvocations: z.number(),
  lambdaMs: z.number(),
  stateTransitions: z.number(),
  dynamoWrites: z.number(),
  proxyBytes: z.number(),
  modelTokens: z.number(),
  modelUsd: z.number().meta({ description: 'Dollars of the model tokens, priced per model when spent.' }),
  humanInterventions: z.number(),
} satisfies Record<keyof Cost, z.ZodNumber>;

export const CostSchema = z.object(COST_COMPONENTS).meta({ id: 'Cost' });

export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'Stable, machine-readable error code.' }),
      message: z.string().meta({ description: 'What to fix.' }),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: 'Error' });

/** Field issues of a failed zod parse, by dotted path (`prefix` names where the value came from). */
export function fieldIssues(error: z.ZodError, prefix = ''): FieldIssue[] {
  const out: FieldIssue[] = [];
  const join = (path: readonly PropertyKey[]): string =>
    [prefix, ...path.map((p) => String(p))].filter((p) => p !== '').join('.') || '(body)';
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ field: join([...issue.path, key]), message: 'is not a field of this request; remove it' });
      }
    } else {
      out.push({ field: join(issue.path), message: issue.message });
    }
  }
  return out;
}
