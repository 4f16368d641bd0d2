import { z } from 'zod';
import { COST_COMPONENTS } from '../schemas.ts';

/** Schemas of the reports routes (validated by the handler, documented by `openapi.ts`). */

const Time = z.iso.datetime({ offset: true });

export const CostReportQuerySchema = z
  .object({
    from: Time.optional().meta({
      description: 'Start of the period (inclusive, ISO time). Default: 30 days before `to`.',
    }),
    to: Time.optional().meta({ description: 'End of the period (exclusive, ISO time). Default: now.' }),
  })
  .strict();

export const CostReportSchema = z
  .object({
    tenantId: z.string(),
    from: z.string(),
    to: z.string(),
    ratesAsOf: z.string().meta({ description: 'Date of the list prices used (lambdas/lib/cost/rates.ts).' }),
    jobs: z.object({ total: z.number().int(), byStatus: z.record(z.string(), z.number().int()) }),
    verifiedCompletions: z.number().int().meta({
      description: 'SUCCEEDED jobs whose finish step verified the outcome in the target applications.',
    }),
    usage: z
      .object(COST_COMPONENTS)
      .meta({ description: 'Usage by component, summed over every ledger entry.' }),
    cost: z
      .object({ ...COST_COMPONENTS, total: z.number() })
      .meta({ description: 'Dollars by component at the dated rates, and the total.' }),
    costPerVerifiedCompletion: z
      .number()
      .nullable()
      .meta({ description: 'Total dollars / verified completions (null without any).' }),
    retries: z.number().int().meta({ description: 'Step failures retried (each spends retry budget).' }),
    humanInterventions: z.number().int(),
    browser: z
      .object({ sessionSeconds: z.number(), activeSeconds: z.number(), idleSeconds: z.number() })
      .meta({
        description:
          'Session time (billed), time spent in steps, and idle time: session time not spent in steps (waits that kept the browser, queues, coordination).',
      }),
    models: z
      .record(
        z.string(),
        z.object({
          decisions: z.number().int(),
          failedCalls: z.number().int().meta({
            description: 'Calls that failed or were refused after the provider counted their tokens.',
          }),
          inputTokens: z.number().int(),
          outputTokens: z.number().int(),
          usd: z.number(),
        }),
      )
      .meta({
        description:
          "Agent steps' model decisions, failed calls, tokens and dollars (failed calls' included), by model.",
      }),
    agent: z
      .object({
        modelCalls: z.number().int(),
        cachedActions: z.number().int(),
        heals: z.number().int(),
        failedReplayActions: z.number().int(),
        usage: z.number().int(),
        modelUsd: z.number(),
        steps: z.object({ hit: z.number().int(), healed: z.number().int(), miss: z.number().int() }),
      })
      .meta({
        description:
          'Agent steps: model calls, actions the action cache served in verified records, heals, cached actions of failed attempts (counted as misses), model tokens (usage) and model dollars; agent steps verified from the cache (hit, healed) or by a model (miss).',
      }),
  })
  .meta({ id: 'CostReport' });
