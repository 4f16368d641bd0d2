/**
 * The local stand-in for the EventBridge rule that sends `Belay Job Waiting` events to the
 * notifier function: the engine's local notifier POSTs each wait to this loopback endpoint
 * (`BELAY_WAIT_WEBHOOK_URL`, with a random token in its path), which answers 202 at once and
 * invokes the notifier through the local Lambda runner in the background, retried twice after a
 * failure as Lambda retries an asynchronous invocation. The job never waits for it.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LocalEventRule {
  /** Where the local notifier posts wait events. */
  url: string;
  /** Invocations still running (tests wait for them). */
  pending(): number;
  stop(): Promise<void>;
}

export async function startLocalEventRule(options: {
  invoke(payload: unknown): Promise<unknown>;
  log?: (line: string) => void;
  retryDelaysMs?: readonly number[];
}): Promise<LocalEventRule> {
  const token = randomBytes(16).toString('hex');
  const delays = options.retryDelaysMs ?? [1_000, 2_000];
  let running = 0;
  let stopped = false;
  const deliver = async (payload: unknown): Promise<void> => {
    running++;
    try {
      for (let attempt = 0; attempt <= delays.length && !stopped; attempt++) {
        if (attempt > 0) await sleep(delays[attempt - 1] as number);
        try {
          await options.invoke({ 'detail-type': 'Belay Job Waiting', source: 'belay', detail: payload });
          return;
        } catch (err) {
          options.log?.(`notifier invocation failed (attempt ${attempt + 1}): ${String(err)}`);
        }
      }
    } finally {
      running--;
    }
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== `/${token}`) {
        res.writeHead(404).end();
        return;
      }
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(202).end();
      void deliver(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    pending: () => running,
    stop: () =>
      new Promise<void>((resolve) => {
        stopped = true;
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
