/**
 * The local stack's own traffic on the local event bus: Step Functions' status changes on the
 * default bus (as AWS sends them, for the recovery rule), and the stand-in for an operator's
 * rule on the wait bus.
 */
import type { LocalEventBridge, LocalRule } from './events/bus.ts';
import type { ExecutionDescription } from './sfn/index.ts';

/** A status change of an execution on the default bus, shaped as Step Functions sends it. */
export function putStatusChange(events: LocalEventBridge, d: ExecutionDescription): void {
  const detail = {
    executionArn: d.executionArn,
    stateMachineArn: d.stateMachineArn,
    name: d.name,
    status: d.status,
    startDate: d.startDate.getTime(),
    stopDate: d.stopDate ? d.stopDate.getTime() : null,
    input: d.input,
    inputDetails: { included: true },
    output: d.output ?? null,
    outputDetails: d.output !== undefined ? { included: true } : null,
    error: d.error ?? null,
    cause: d.cause ?? null,
  };
  try {
    events.publish([
      {
        Source: 'aws.states',
        DetailType: 'Step Functions Execution Status Change',
        Detail: JSON.stringify(detail),
        Resources: [d.executionArn],
      },
    ]);
  } catch {
    // The bus is stopping with the stack.
  }
}

/**
 * The local stand-in for the rules an operator puts on the wait bus (paging approvers): the
 * wait events go to `BELAY_WAIT_WEBHOOK_URL` when it is set, best effort.
 */
export function waitSubscriber(bus: string | undefined, webhookUrl: string | undefined): LocalRule {
  return {
    name: 'local-wait-subscriber',
    eventBusName: bus ?? 'default',
    enabled: bus !== undefined && webhookUrl !== undefined,
    pattern: { source: ['belay'], 'detail-type': ['Belay Job Waiting', 'Belay Check Failed'] },
    targets: [
      {
        kind: 'handler',
        id: 'webhook',
        async handle(event) {
          await fetch(webhookUrl as string, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(event.detail),
            signal: AbortSignal.timeout(3000),
          });
        },
      },
    ],
  };
}
