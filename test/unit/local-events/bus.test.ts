import { describe, expect, it } from 'vitest';
import { createLocalEventBridge, MAX_PUT_EVENTS_BYTES } from '../../../local/events/bus.ts';
import { BusApiError } from '../../../local/events/errors.ts';
import { matchesPattern } from '../../../local/events/pattern.ts';
import { rateMs } from '../../../local/events/rules.ts';

const statusChange = (status: string) => ({
  source: 'aws.states',
  'detail-type': 'Step Functions Execution Status Change',
  detail: { status, stateMachineArn: 'arn:aws:states:us-east-1:0:stateMachine:m' },
});

describe('Function: matchesPattern', () => {
  const pattern = {
    source: ['aws.states'],
    'detail-type': ['Step Functions Execution Status Change'],
    detail: {
      status: ['FAILED', 'TIMED_OUT', 'ABORTED'],
      stateMachineArn: ['arn:aws:states:us-east-1:0:stateMachine:m'],
    },
  };
  it.each([
    ['FAILED', true],
    ['ABORTED', true],
    ['SUCCEEDED', false],
    ['RUNNING', false],
  ])('a %s status change matches the recovery rule: %s', (status, expected) => {
    expect(matchesPattern(pattern, statusChange(status))).toBe(expected);
  });
  it('matches content filters', () => {
    expect(matchesPattern({ detail: { name: [{ prefix: 'job-' }] } }, { detail: { name: 'job-1' } })).toBe(
      true,
    );
    expect(matchesPattern({ detail: { name: [{ 'anything-but': ['x'] }] } }, { detail: { name: 'x' } })).toBe(
      false,
    );
    expect(matchesPattern({ detail: { error: [{ exists: false }] } }, { detail: {} })).toBe(true);
    expect(matchesPattern({ detail: { n: [{ numeric: ['>', 1, '<=', 3] }] } }, { detail: { n: 3 } })).toBe(
      true,
    );
  });
});

describe('Function: createLocalEventBridge', () => {
  const make = () => {
    const invoked: unknown[] = [];
    const bus = createLocalEventBridge({
      region: 'us-east-1',
      account: '000000000000',
      buses: ['waits'],
      invoke: async (_arn, payload) => {
        invoked.push(payload);
        return null;
      },
      retryDelaysMs: [1, 1],
      schedules: false,
    });
    return { bus, invoked };
  };

  it('routes an accepted event to the matching rule’s function', async () => {
    const { bus, invoked } = make();
    bus.addRule({
      name: 'r',
      eventBusName: 'waits',
      enabled: true,
      pattern: { source: ['belay'] },
      targets: [{ kind: 'lambda', id: 't', functionArn: 'arn:aws:lambda:us-east-1:0:function:f' }],
    });
    const out = bus.putEvents([
      { EventBusName: 'waits', Source: 'belay', DetailType: 'x', Detail: '{"a":1}' },
    ]);
    expect(out.FailedEntryCount).toBe(0);
    bus.putEvents([{ EventBusName: 'waits', Source: 'other', DetailType: 'x', Detail: '{}' }]);
    await bus.idle();
    expect(invoked).toMatchObject([{ source: 'belay', detail: { a: 1 } }]);
  });

  it('refuses what EventBridge refuses: over 256 KiB, more than 10 entries, a malformed detail', () => {
    const { bus } = make();
    const big = 'x'.repeat(MAX_PUT_EVENTS_BYTES);
    expect(() => bus.putEvents([{ Source: 's', DetailType: 'd', Detail: JSON.stringify({ big }) }])).toThrow(
      /over the limit/,
    );
    const eleven = Array.from({ length: 11 }, () => ({ Source: 's', DetailType: 'd', Detail: '{}' }));
    expect(() => bus.putEvents(eleven)).toThrow(BusApiError);
    expect(bus.putEvents([{ Source: 's', DetailType: 'd', Detail: '{nope' }])).toMatchObject({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'MalformedDetail' }],
    });
  });

  it('fails PutEvents as injected, and leaves a service’s own events alone', () => {
    const { bus } = make();
    bus.inject('throttle');
    bus.inject('failed-entry');
    const entry = { Source: 's', DetailType: 'd', Detail: '{}' };
    expect(bus.publish([entry]).FailedEntryCount).toBe(0);
    expect(() => bus.putEvents([entry])).toThrow(expect.objectContaining({ name: 'ThrottlingException' }));
    expect(bus.putEvents([entry])).toMatchObject({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'InternalFailure' }],
    });
    expect(bus.putEvents([entry]).FailedEntryCount).toBe(0);
  });

  it('retries a target that fails, as Lambda retries an asynchronous invocation', async () => {
    let calls = 0;
    const bus = createLocalEventBridge({
      region: 'us-east-1',
      account: '0',
      invoke: async () => {
        calls++;
        if (calls < 3) throw new Error('not yet');
        return null;
      },
      retryDelaysMs: [1, 1],
    });
    bus.addRule({
      name: 'r',
      eventBusName: 'default',
      enabled: true,
      pattern: { source: ['s'] },
      targets: [{ kind: 'lambda', id: 't', functionArn: 'f' }],
    });
    bus.putEvents([{ Source: 's', DetailType: 'd', Detail: '{}' }]);
    await bus.idle();
    expect(bus.deliveries).toMatchObject([{ ok: true, attempts: 3 }]);
  });
});

describe('Function: rateMs', () => {
  it.each([
    ['rate(5 minutes)', 300_000],
    ['rate(1 hour)', 3_600_000],
    ['cron(0 12 * * ? *)', undefined],
  ])('%s is %s ms', (expression, ms) => {
    expect(rateMs(expression)).toBe(ms);
  });
});
