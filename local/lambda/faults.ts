/**
 * Matching reported fault points against armed faults.
 */
import type { FaultPointInfo, FaultPointMessage } from '../../lambdas/lib/fault.ts';
import type { ArmedFault } from './types.ts';

function infoMatches(want: FaultPointInfo | undefined, got: FaultPointInfo): boolean {
  if (!want) return true;
  return (
    (want.jobId === undefined || want.jobId === got.jobId) &&
    (want.step === undefined || want.step === got.step) &&
    (want.stepIndex === undefined || want.stepIndex === got.stepIndex) &&
    (want.action === undefined || want.action === got.action)
  );
}

/** The first armed fault (with firings left) that a point reported by `functionName` matches. */
export function matchFault<F extends ArmedFault & { left: number }>(
  armed: readonly F[],
  message: FaultPointMessage,
  functionName: string,
  normalize: (nameOrArn: string) => string,
): F | undefined {
  return armed.find(
    (f) =>
      f.left > 0 &&
      f.point === message.point &&
      (f.functionName === undefined || normalize(f.functionName) === functionName) &&
      infoMatches(f.match, message.info),
  );
}
