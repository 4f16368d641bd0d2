import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEventBridge, type LocalEventBridge } from '../../../local/events/bus.ts';
import { type LocalEventsServer, startLocalEventsServer } from '../../../local/events/http.ts';

const FUNCTION = 'arn:aws:lambda:us-east-1:000000000000:function:belay-notify';
const invoked: unknown[] = [];

let bus: LocalEventBridge;
let server: LocalEventsServer;
let client: EventBridgeClient;

beforeAll(async () => {
  bus = createLocalEventBridge({
    region: 'us-east-1',
    account: '000000000000',
    buses: ['BelayWaitEvents'],
    invoke: async (_arn, payload) => {
      invoked.push(payload);
      return {};
    },
    schedules: false,
  });
  bus.addRule({
    name: 'WaitEventsToWebhooks',
    eventBusName: 'BelayWaitEvents',
    pattern: { source: ['belay'], 'detail-type': ['Belay Job Waiting'] },
    enabled: true,
    targets: [{ kind: 'lambda', id: 'Notifier', functionArn: FUNCTION }],
  });
  server = await startLocalEventsServer(bus);
  client = new EventBridgeClient({
    endpoint: server.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
});

afterAll(async () => {
  client?.destroy();
  await server?.stop();
  await bus?.stop();
});

/** A raw call of the endpoint, as a client that is not the SDK might make it. */
async function raw(target: string, body: string): Promise<{ status: number; json: unknown; type: string }> {
  const res = await fetch(server.endpoint, {
    method: 'POST',
    headers: { 'x-amz-target': target, 'content-type': 'application/x-amz-json-1.1' },
    body,
  });
  return { status: res.status, json: await res.json(), type: res.headers.get('content-type') ?? '' };
}

describe('Function: startLocalEventsServer with the real EventBridgeClient', () => {
  it('puts an event on the bus, whose rule delivers it to its target', async () => {
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: 'BelayWaitEvents',
            Source: 'belay',
            DetailType: 'Belay Job Waiting',
            Detail: JSON.stringify({ jobId: 'job-1' }),
          },
        ],
      }),
    );
    expect(out.FailedEntryCount).toBe(0);
    expect(out.Entries?.[0]?.EventId).toEqual(expect.any(String));
    const end = Date.now() + 5000;
    while (invoked.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(invoked).toEqual([expect.objectContaining({ detail: { jobId: 'job-1' } })]);
  });

  it("answers a refused call with the API's error code, which the SDK throws by name", async () => {
    bus.inject('throttle', 1);
    await expect(
      client.send(new PutEventsCommand({ Entries: [{ Source: 'belay', DetailType: 'x', Detail: '{}' }] })),
    ).rejects.toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
  });

  it('answers an unknown operation and a malformed body as EventBridge does (AWS JSON 1.1)', async () => {
    expect(await raw('AWSEvents.PutRule', '{}')).toEqual({
      status: 400,
      json: { __type: 'UnknownOperationException', message: 'Unknown operation AWSEvents.PutRule' },
      type: 'application/x-amz-json-1.1',
    });
    for (const body of ['{not json', '[1]']) {
      expect(await raw('AWSEvents.PutEvents', body)).toEqual({
        status: 400,
        json: { __type: 'SerializationException', message: 'Malformed JSON' },
        type: 'application/x-amz-json-1.1',
      });
    }
  });
});
