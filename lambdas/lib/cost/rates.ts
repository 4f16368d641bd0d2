import type { Cost } from '../ledger/types.ts';

/**
 * Published list prices used to turn a job's counted usage into dollars. One place, with the
 * date the figures were taken; update them together. Region: us-east-1, on-demand.
 */
export const RATES_AS_OF = '2026-11-01';

export const RATES = {
  /** Step Functions Standard: $0.025 per 1,000 state transitions. */
  stateTransition: 0.025 / 1000,
  /** Lambda on arm64: $0.20 per 1M requests. */
  lambdaRequest: 0.2 / 1_000_000,
  /** Lambda on arm64: $0.0000133334 per GB-second (first pricing tier). */
  lambdaGbSecond: 0.0000133334,
  /** Memory the engine's browser-driving functions are given (GB), for GB-seconds. */
  lambdaMemoryGb: 1,
  /** DynamoDB on-demand: $0.625 per million write request units (a transactional write counts 2). */
  dynamoWriteUnit: 0.625 / 1_000_000,
  /**
   * Browser time, per browser-hour. An ASSUMPTION, not a published figure: Anchor bills in
   * credits ($1.00 per overage credit on Starter and Growth) and its per-hour credit rate is
   * not recorded here. Set it from your plan before trusting the browser line of a report.
   */
  browserHour: 0.05,
  /** Proxy traffic, per GB: an assumption to set from the proxy plan. */
  proxyGb: 4,
  /** Model tokens, per 1M (blended input/output) where an agent reports them: an assumption to set per model. */
  modelMillionTokens: 3,
  /** A person's intervention (approval, MFA, review): an internal estimate, not a price. */
  humanIntervention: 0.5,
} as const;

export type CostComponent = keyof Cost;

/** Dollars per component for a cost record. */
export function priceCost(cost: Cost): Record<CostComponent, number> & { total: number } {
  const priced = {
    browserSeconds: (cost.browserSeconds / 3600) * RATES.browserHour,
    lambdaInvocations: cost.lambdaInvocations * RATES.lambdaRequest,
    lambdaMs: (cost.lambdaMs / 1000) * RATES.lambdaMemoryGb * RATES.lambdaGbSecond,
    stateTransitions: cost.stateTransitions * RATES.stateTransition,
    dynamoWrites: cost.dynamoWrites * RATES.dynamoWriteUnit,
    proxyBytes: (cost.proxyBytes / 1e9) * RATES.proxyGb,
    modelTokens: (cost.modelTokens / 1e6) * RATES.modelMillionTokens,
    humanInterventions: cost.humanInterventions * RATES.humanIntervention,
  };
  const total = Object.values(priced).reduce((a, b) => a + b, 0);
  return { ...priced, total };
}
