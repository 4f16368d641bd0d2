/**
 * IAM for AWS calls that do not go through an SDK client: the AI SDK's Bedrock provider signs its
 * own requests (SigV4) and sends them with `fetch`, so the `Client.send` hook never sees them.
 * `enforcedFetch` wraps a `fetch`: a request to an AWS endpoint (`*.amazonaws.com`) is mapped to
 * the IAM requests AWS would authorize it by and evaluated against the caller's policy before
 * anything is sent; a refused call gets the answer the service sends (403, AccessDeniedException).
 * A request to any other host passes as it is. An AWS endpoint this file does not map is refused
 * unless the policy allows its service's every action: no AWS call escapes unchecked.
 */
import { evaluate, type IamRequest } from './evaluate.ts';
import type { EnforcementSpec, ResourceFacts } from './policies.ts';
import { refusalMessage, refusalResponse } from './refusal.ts';
import { iamRequests } from './requests.ts';

/** Bedrock Runtime's REST paths (the AI SDK's Converse calls, InvokeModel's too) -> the SDK's operation. */
const BEDROCK_PATHS: Readonly<Record<string, string>> = {
  converse: 'Converse',
  'converse-stream': 'ConverseStream',
  invoke: 'InvokeModel',
  'invoke-with-response-stream': 'InvokeModelWithResponseStream',
};

const AWS_HOST = /^([a-z0-9-]+)(?:\.[a-z0-9-]+)*\.amazonaws\.com(?:\.cn)?$/;

/** What one fetch to an AWS endpoint asks IAM for; undefined for a host that is not AWS's. */
export function fetchRequests(
  facts: ResourceFacts,
  url: URL,
): { operation: string; requests: IamRequest[] } | undefined {
  const host = AWS_HOST.exec(url.hostname);
  if (!host) return undefined;
  const service = host[1] ?? '';
  const model = /^\/model\/([^/]+)\/([a-z-]+)$/.exec(url.pathname);
  const operation = model ? BEDROCK_PATHS[model[2] ?? ''] : undefined;
  if (service.startsWith('bedrock-runtime') && model && operation) {
    const modelId = decodeURIComponent(model[1] ?? '');
    return {
      operation,
      requests: iamRequests(facts, 'BedrockRuntimeClient', `${operation}Command`, { modelId }),
    };
  }
  const prefix = service.replace(/-fips$/, '').replace(/^bedrock-runtime$/, 'bedrock');
  return { operation: 'Unknown', requests: [{ action: `${prefix}:${url.pathname || '/'}`, resource: '*' }] };
}

/** A refused fetch, as reported to the enforcement's listeners. */
export interface FetchRefusal {
  functionName: string;
  operation: string;
  request: IamRequest;
  message: string;
}

/**
 * `inner` with every request to an AWS endpoint held to the policy `specFor()` answers at the time
 * of the call (none: not checked, as for SDK clients outside any scope).
 */
export function enforcedFetch(
  specFor: () => EnforcementSpec | undefined,
  inner: typeof fetch,
  onRefusal: (refusal: FetchRefusal) => void = () => undefined,
): typeof fetch {
  return async (input, init) => {
    const spec = specFor();
    if (!spec) return inner(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const asked = fetchRequests(spec.facts, url);
    if (!asked) return inner(input, init);
    for (const request of asked.requests) {
      const decision = evaluate(spec.policy.statements, request);
      if (decision.allowed) continue;
      const message = refusalMessage(spec.policy.callerArn, request, decision.explicitDeny);
      onRefusal({ functionName: spec.policy.functionName, operation: asked.operation, request, message });
      const refused = refusalResponse('BedrockRuntimeClient', message);
      return new Response(Buffer.from(refused.body), {
        status: refused.statusCode,
        ...(refused.reason ? { statusText: refused.reason } : {}),
        headers: refused.headers,
      });
    }
    return inner(input, init);
  };
}
