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
  /**
   * Model tokens a browser provider reports for a session (its own AI features), per 1M, blended
   * input/output: an assumption. Belay's own agent decisions are priced per model (`MODEL_RATES`).
   */
  modelMillionTokens: 3,
  /** A person's intervention (approval, MFA, review): an internal estimate, not a price. */
  humanIntervention: 0.5,
} as const;

/** Dollars per 1M input and output tokens of one model. */
export interface ModelRate {
  inputPerMillion: number;
  outputPerMillion: number;
}

/**
 * List prices of the models an agent step may be configured with, as of {@link RATES_AS_OF},
 * keyed by the model id (without the provider prefix). Bedrock's on-demand price of a Claude
 * model is Anthropic's own; a cross-region inference profile (`us.`, `eu.`, `apac.`, `global.`)
 * costs what its model costs. A model missing here is priced at {@link UNLISTED_MODEL_RATE}
 * (and the decision says so), never at zero. `local` (the rule-based policy) costs nothing.
 */
export const MODEL_RATES: Readonly<Record<string, ModelRate>> = Object.freeze({
  'claude-sonnet-4-5': { inputPerMillion: 3, outputPerMillion: 15 },
  'claude-haiku-4-5': { inputPerMillion: 1, outputPerMillion: 5 },
  'claude-opus-4-1': { inputPerMillion: 15, outputPerMillion: 75 },
  'anthropic.claude-sonnet-4-5-20250929-v1:0': { inputPerMillion: 3, outputPerMillion: 15 },
  'anthropic.claude-haiku-4-5-20251001-v1:0': { inputPerMillion: 1, outputPerMillion: 5 },
  'amazon.nova-pro-v1:0': { inputPerMillion: 0.8, outputPerMillion: 3.2 },
  'amazon.nova-lite-v1:0': { inputPerMillion: 0.06, outputPerMillion: 0.24 },
  'gpt-5': { inputPerMillion: 1.25, outputPerMillion: 10 },
  'gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2 },
  'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 },
});

/** The price of a model missing from {@link MODEL_RATES}: a frontier model's, so an unknown one is not under-counted. */
export const UNLISTED_MODEL_RATE: ModelRate = Object.freeze({ inputPerMillion: 15, outputPerMillion: 75 });

/** The rate of a model spec (`bedrock:<id>`, `anthropic:<id>`, `openai:<id>`, `local`), and whether it is listed. */
export function modelRate(spec: string): { rate: ModelRate; listed: boolean } {
  if (spec === 'local') return { rate: { inputPerMillion: 0, outputPerMillion: 0 }, listed: true };
  const id = spec.slice(spec.indexOf(':') + 1);
  // A cross-region inference profile id is its model's id behind a geography.
  const base = id.replace(/^(us|eu|apac|global|us-gov)\./, '');
  const rate = MODEL_RATES[id] ?? MODEL_RATES[base];
  return rate ? { rate, listed: true } : { rate: UNLISTED_MODEL_RATE, listed: false };
}

/** Dollars of one model call of `spec` that used these tokens. */
export function modelCallUsd(spec: string, usage: { input: number; output: number }): number {
  const { rate } = modelRate(spec);
  return (usage.input * rate.inputPerMillion + usage.output * rate.outputPerMillion) / 1e6;
}

/** Dollars of tokens a browser provider reports for a session, at the blended rate. */
export function providerTokensUsd(tokens: number): number {
  return (tokens / 1e6) * RATES.modelMillionTokens;
}

export type CostComponent = keyof Cost;

/**
 * Dollars per component for a cost record. Model tokens are priced where they were spent
 * (`modelUsd`), so their dollars appear once, on `modelUsd`; `modelTokens` is their count.
 */
export function priceCost(cost: Cost): Record<CostComponent, number> & { total: number } {
  const priced = {
    browserSeconds: (cost.browserSeconds / 3600) * RATES.browserHour,
    lambdaInvocations: cost.lambdaInvocations * RATES.lambdaRequest,
    lambdaMs: (cost.lambdaMs / 1000) * RATES.lambdaMemoryGb * RATES.lambdaGbSecond,
    stateTransitions: cost.stateTransitions * RATES.stateTransition,
    dynamoWrites: cost.dynamoWrites * RATES.dynamoWriteUnit,
    proxyBytes: (cost.proxyBytes / 1e9) * RATES.proxyGb,
    modelTokens: 0,
    modelUsd: cost.modelUsd,
    humanInterventions: cost.humanInterventions * RATES.humanIntervention,
  };
  const total = Object.values(priced).reduce((a, b) => a + b, 0);
  return { ...priced, total };
}
