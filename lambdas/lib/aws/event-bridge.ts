import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { traced } from '../observability/tracing.ts';
import { clientConfigFromEnv } from './endpoint.ts';
import { eventBridgeSdk } from './sdk/client-eventbridge.ts';

let client: EventBridgeClient | undefined;

/**
 * The process's EventBridge client (the wait events people are told of), built on first use
 * (traced where tracing is on); `EVENTBRIDGE_ENDPOINT` points it at the local event bus.
 */
export function eventBridgeClient(env: NodeJS.ProcessEnv = process.env): EventBridgeClient {
  client ??= traced(
    new (eventBridgeSdk().EventBridgeClient)(clientConfigFromEnv('EVENTBRIDGE_ENDPOINT', env)),
  );
  return client;
}
