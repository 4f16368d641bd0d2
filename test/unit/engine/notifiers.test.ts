import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  eventBridgeNotifier,
  MAX_WAIT_EVENT_DETAIL_BYTES,
  NOTIFY_ATTEMPTS,
  waitEventDetail,
} from '../../../lambdas/lib/engine/notifiers.ts';
import type { WaitEvent } from '../../../lambdas/lib/engine/types.ts';
import type { BelayLogger } from '../../../lambdas/lib/logger.ts';

const event = (evidence: Record<string, unknown>[]): WaitEvent => ({
  tenantId: 'acme',
  jobId: 'job-1',
  kind: 'approval',
  step: 'place-order',
  reason: 'needs_approval',
  expiresAt: '2026-01-01T00:00:00.000Z',
  evidence,
});

const events = mockClient(EventBridgeClient);
afterEach(() => events.reset());

function logger(): BelayLogger & { error: ReturnType<typeof vi.fn> } {
  const log = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } as unknown as BelayLogger & {
    error: ReturnType<typeof vi.fn>;
  };
  (log as unknown as { child: () => unknown }).child = () => log;
  return log;
}

describe('Function: waitEventDetail', () => {
  it('keeps the newest evidence that fits and says how much it left out (EventBridge takes 256 KiB a request)', () => {
    const evidence = Array.from({ length: 400 }, (_, i) => ({ step: `s${i}`, text: 'x'.repeat(2000) }));
    const detail = waitEventDetail(event(evidence), 'https://belay.example/jobs/job-1');
    expect(Buffer.byteLength(JSON.stringify(detail))).toBeLessThanOrEqual(MAX_WAIT_EVENT_DETAIL_BYTES);
    const kept = detail.evidence as { step: string }[];
    expect(kept.at(-1)?.step).toBe('s399');
    expect(detail.evidenceOmitted).toBe(400 - kept.length);
    expect(detail.link).toBe('https://belay.example/jobs/job-1');
  });

  it('carries all of a small evidence list', () => {
    const detail = waitEventDetail(event([{ step: 'a' }, { step: 'b' }]), undefined);
    expect(detail.evidence).toEqual([{ step: 'a' }, { step: 'b' }]);
    expect(detail.evidenceOmitted).toBeUndefined();
  });
});

describe('Function: eventBridgeNotifier', () => {
  it('tries again after a failed PutEvents and succeeds', async () => {
    events
      .on(PutEventsCommand)
      .rejectsOnce(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }))
      .resolvesOnce({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure', ErrorMessage: 'x' }] })
      .resolvesOnce({ FailedEntryCount: 0, Entries: [{ EventId: 'e1' }] });
    const log = logger();
    const notifier = eventBridgeNotifier(new EventBridgeClient({ region: 'us-east-1' }), 'waits', undefined, {
      log,
      retryDelayMs: 1,
    });
    await notifier.waiting(event([]));
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(3);
    expect(log.error).not.toHaveBeenCalled();
  });

  it('logs and resolves (never throws) when every attempt fails', async () => {
    events.on(PutEventsCommand).rejects(Object.assign(new Error('boom'), { name: 'InternalException' }));
    const log = logger();
    const notifier = eventBridgeNotifier(new EventBridgeClient({ region: 'us-east-1' }), 'waits', undefined, {
      log,
      retryDelayMs: 1,
    });
    await expect(notifier.waiting(event([]))).resolves.toBeUndefined();
    expect(events.commandCalls(PutEventsCommand)).toHaveLength(NOTIFY_ATTEMPTS);
    expect(log.error).toHaveBeenCalledWith(
      expect.stringContaining('the wait stands'),
      expect.objectContaining({ jobId: 'job-1', error: expect.stringContaining('InternalException') }),
    );
  });
});
