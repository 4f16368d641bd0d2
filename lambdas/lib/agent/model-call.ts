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

/**
 * What the ledger keeps of a model call that failed after the provider counted its tokens (a
 * `model-call-failed` entry): who, the tokens, why (the error's name and first line, never the
 * request), what the call was for, and the cost.
 */
export function failedCallRecord(
  call: ModelCall,
  purpose: 'decide' | 'probe',
  err: unknown,
): { detail: Record<string, unknown>; cost: { modelTokens: number; modelUsd: number } } {
  const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return {
    detail: {
      purpose,
      model: call.model,
      ...(call.providerModelId ? { providerModelId: call.providerModelId } : {}),
      usage: call.tokens,
      error: why.split('\n')[0]?.slice(0, 300) ?? 'error',
    },
    cost: {
      modelTokens: call.tokens.input + call.tokens.output,
      modelUsd: modelCallUsd(call.model, call.tokens),
    },
  };
}
