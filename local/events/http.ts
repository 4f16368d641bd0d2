/**
 * The local event bus behind EventBridge's API (AWS JSON 1.1, `AWSEvents.PutEvents`), so the
 * real `EventBridgeClient` of a worker puts events on it: `new EventBridgeClient({ endpoint })`.
 */
import { type AwsJsonServer, startAwsJsonServer } from '../aws-json.ts';
import type { LocalEventBridge, PutEventsEntry } from './bus.ts';
import { BusApiError } from './errors.ts';

/** A running endpoint. */
export type LocalEventsServer = AwsJsonServer;

/** Serves `bus` on loopback. */
export function startLocalEventsServer(bus: LocalEventBridge, port = 0): Promise<LocalEventsServer> {
  return startAwsJsonServer(
    {
      version: '1.1',
      targetPrefix: 'AWSEvents',
      operations: {
        PutEvents: (body) => bus.putEvents((body.Entries as PutEventsEntry[] | undefined) ?? []),
      },
      isApiError: (err) => err instanceof BusApiError,
      malformed: { type: 'SerializationException', message: 'Malformed JSON' },
      internal: {
        type: 'InternalException',
        message: 'Internal error in the local event bus',
        service: 'local EventBridge endpoint',
      },
    },
    { port },
  );
}
