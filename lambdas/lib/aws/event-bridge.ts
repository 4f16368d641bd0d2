import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { traced } from '../observability/tracing.ts';

/** An EventBridge client (the wait events people are told of). */
export function eventBridgeClient(): EventBridgeClient {
  return traced(new EventBridgeClient({}));
}
