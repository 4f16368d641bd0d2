/**
 * The local event bus behind EventBridge's API (AWS JSON 1.1, `AWSEvents.PutEvents`), so the
 * real `EventBridgeClient` of a worker puts events on it: `new EventBridgeClient({ endpoint })`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalEventBridge, PutEventsEntry } from './bus.ts';
import { BusApiError } from './errors.ts';

/** A running endpoint. */
export interface LocalEventsServer {
  /** `http://127.0.0.1:<port>`: the `endpoint` of an EventBridgeClient. */
  endpoint: string;
  stop(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

/** Serves `bus` on loopback. */
export async function startLocalEventsServer(bus: LocalEventBridge, port = 0): Promise<LocalEventsServer> {
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      try {
        const target = String(req.headers['x-amz-target'] ?? '');
        if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') {
          reply(res, 400, { __type: 'UnknownOperationException', message: `Unknown operation ${target}` });
          return;
        }
        let body: { Entries?: PutEventsEntry[] };
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { Entries?: PutEventsEntry[] };
        } catch {
          reply(res, 400, { __type: 'SerializationException', message: 'Malformed JSON' });
          return;
        }
        reply(res, 200, bus.putEvents(body.Entries ?? []));
      } catch (err) {
        if (err instanceof BusApiError)
          reply(res, err.statusCode, { __type: err.name, message: err.message });
        else
          reply(res, 500, { __type: 'InternalException', message: 'Internal error in the local event bus' });
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
