/** Concurrent browser sessions per plan, after Anchor's published plans (free 5, starter 25, growth 200, enterprise 500). */
export const PLAN_CAPS = {
  free: 5,
  starter: 25,
  growth: 200,
  enterprise: 500,
} as const;

export type PlanName = keyof typeof PLAN_CAPS;

export function isPlanName(value: unknown): value is PlanName {
  return typeof value === 'string' && Object.hasOwn(PLAN_CAPS, value);
}
