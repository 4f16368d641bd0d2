import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { clientConfigFromEnv } from './endpoint.ts';

let client: EventBridgeClient | undefined;

/**
 * The process's EventBridge client (the wait events people are told of), built on first use;
 * `EVENTBRIDGE_ENDPOINT` points it at the local event bus.
 */
export function eventBridgeClient(env: NodeJS.ProcessEnv = process.env): EventBridgeClient {
  client ??= new EventBridgeClient(clientConfigFromEnv('EVENTBRIDGE_ENDPOINT', env));
  return client;
}
