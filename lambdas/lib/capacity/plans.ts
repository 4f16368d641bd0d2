import { z } from 'zod';

/** Concurrent browser sessions per plan, after Anchor's published plans (free 5, starter 25, growth 200, enterprise 500). */
export const PLAN_CAPS = {
  free: 5,
  starter: 25,
  growth: 200,
  enterprise: 500,
} as const;

export type PlanName = keyof typeof PLAN_CAPS;

/** Caps per plan as a deployment sets them (`BELAY_PLAN_CAPS`), over the defaults. */
export type PlanCaps = Readonly<Record<PlanName, number>>;

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === 'string' && Object.hasOwn(PLAN_CAPS, value);
}

const CapOverridesSchema = z
  .object({
    free: z.number().int().min(1).max(100_000).optional(),
    starter: z.number().int().min(1).max(100_000).optional(),
    growth: z.number().int().min(1).max(100_000).optional(),
    enterprise: z.number().int().min(1).max(100_000).optional(),
  })
  .strict();

/**
 * The plans' caps with a deployment's overrides, e.g. `{"free": 2}` (the value of
 * `BELAY_PLAN_CAPS`). Unknown plans and caps that are not positive integers are refused.
 *
 * @example
 * planCaps({ growth: 250 }).growth; // 250
 */
export function planCaps(overrides: unknown = {}): PlanCaps {
  return { ...PLAN_CAPS, ...CapOverridesSchema.parse(overrides) } as PlanCaps;
}
