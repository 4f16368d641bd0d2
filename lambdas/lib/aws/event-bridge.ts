import { EventBridgeClient } from '@aws-sdk/client-eventbridge';

/** An EventBridge client (the wait events people are told of). */
export function eventBridgeClient(): EventBridgeClient {
  return new EventBridgeClient({});
}
