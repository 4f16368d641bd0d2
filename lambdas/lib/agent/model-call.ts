import { modelCallUsd } from '../cost/rates.ts';
import type { Seen } from './observe.ts';
import type { ModelCall } from './policy.ts';

/**
 * What every ledger entry of a model call carries, in one shape for the agent loop's actions
 * and the agent probe's answers: who answered, its usage (and simulated latency), what it saw,
 * and the cost (tokens and dollars at `cost/rates.ts`).
 */
export function modelCallRecord(
  call: ModelCall,
  seen: Seen,
): {
  detail: Record<string, unknown>;
  cost: { modelTokens: number; modelUsd: number };
} {
  return {
    detail: {
      model: call.model,
      ...(call.providerModelId ? { providerModelId: call.providerModelId } : {}),
      usage: call.tokens,
      ...(call.simulatedLatencyMs !== undefined ? { simulatedLatencyMs: call.simulatedLatencyMs } : {}),
      seen: { url: seen.url, fingerprint: seen.fingerprint, snapshot: seen.snapshot },
    },
    cost: {
      modelTokens: call.tokens.input + call.tokens.output,
      modelUsd: modelCallUsd(call.model, call.tokens),
    },
  };
}
