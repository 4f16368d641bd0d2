import { describe, expect, it } from 'vitest';
import { createProgressTracker } from '../../../local/progress.ts';
import type { HistoryEvent } from '../../../local/sfn/index.ts';

const ARN = 'arn:aws:states:us-east-1:000000000000:execution:belay-local:job-1';
let id = 0;
const event = (type: HistoryEvent['type'], extra: Partial<HistoryEvent>): HistoryEvent => ({
  id: ++id,
  previousEventId: id - 1,
  timestamp: new Date(0),
  type,
  executionArn: ARN,
  ...extra,
});
const exited = (name: string, result: Record<string, unknown>): HistoryEvent =>
  event('TaskStateExited', { stateExitedEventDetails: { name, output: JSON.stringify({ result }) } });

describe('Function: createProgressTracker', () => {
  it('reports a step verified by RunStep or RunNextStep once, and not again when RunNextStep hands it on', () => {
    const track = createProgressTracker();
    track(
      event('ExecutionStarted', {
        executionStartedEventDetails: {
          input: '{"tenantId":"t","jobId":"job-1"}',
          roleArn: 'r',
          stateMachineArn: 's',
        },
      }),
    );
    const completed = { outcome: 'completed', step: 'search', stepIndex: 2, nextStep: 3, stepCount: 14 };
    const approval = { outcome: 'needs_approval', step: 'place-order', stepIndex: 13 };
    const lines = [
      track(exited('RunStep', completed)),
      track(exited('RunNextStep', { ...completed, step: 'add-item', stepIndex: 3, nextStep: 4 })),
      track(exited('RunStep', approval)),
      track(exited('RunNextStep', approval)),
    ].map((l) => l?.text);
    expect(lines).toEqual([
      'step 3/14 search verified',
      'step 4/14 add-item verified',
      'step place-order needs approval',
      undefined,
    ]);
  });
});
