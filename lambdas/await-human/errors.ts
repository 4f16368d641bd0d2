import { REJECTED_ERROR } from '../lib/engine/waits.ts';
import { BelayError } from '../lib/errors.ts';
/**
 * Errors of the human-wait handler. Their names are what the state machine's `Catch` matches
 * on the parked wait (`AwaitParked`).
 */

/**
 * The parked wait needs no token: the person's approval was recorded while the job parked,
 * or the job ended meanwhile. The state machine goes on to take a lease again (which stops
 * a finished job).
 */
export class WaitAnsweredError extends BelayError {
  constructor(
    readonly jobId: string,
    readonly step: string,
    readonly answer: 'approve' | 'finished',
    options?: ErrorOptions,
  ) {
    super(
      'WaitAnsweredError',
      'wait-answered',
      answer === 'approve'
        ? `step ${step} of job ${jobId} was approved while the job was parked`
        : `job ${jobId} finished while parked at step ${step}`,
      options,
    );
  }
}

/**
 * The person rejected the step while the job was parked. Its name is the error a rejection
 * fails a wait with (`Belay.Rejected`, what `decide` sends), so the job fails with reason
 * `rejected` exactly as when the rejection reaches a waiting token.
 */
export class ApprovalRejectedError extends BelayError {
  constructor(
    readonly jobId: string,
    readonly step: string,
    options?: ErrorOptions,
  ) {
    super(REJECTED_ERROR, 'rejected', `step ${step} of job ${jobId} was rejected`, options);
  }
}
