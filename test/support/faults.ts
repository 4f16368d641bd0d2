/** Faults a test injects: SIGKILLs of a RunStep worker at a fault point, and of a job's browser. */
import type { FaultPoint } from '../../lambdas/lib/fault.ts';
import type { FaultPointEvent } from '../../local/lambda/events.ts';
import { localFunctionArn } from '../../local/stack.ts';
import type { EngineStack } from './engine-stack.ts';
import { RUN_STEP } from './fixtures.ts';

/** Arms a SIGKILL of the RunStep worker of `jobId` at `point` of step `stepIndex`. */
export function armKill(engine: EngineStack, jobId: string, stepIndex: number, point: FaultPoint): void {
  engine.stack.lambdas.arm({
    functionName: localFunctionArn('RunStep'),
    point,
    match: { jobId, stepIndex },
    times: 1,
  });
}

/** The job's running browser session for `app` in the browser service (found by the job's tag). */
export function liveSessionOf(engine: EngineStack, jobId: string, app = 'shop'): string | undefined {
  return engine.stack.anchor
    .sessions()
    .find(
      (s) =>
        s.status === 'running' &&
        Array.isArray(s.tags) &&
        s.tags.includes(`jobId:${jobId}`) &&
        s.tags.includes(`application:${app}`),
    )?.id;
}

/**
 * SIGKILLs the job's browser when its RunStep worker reaches `point` of step `stepIndex`,
 * before the worker goes on (the runner acks a fault point only after its listeners ran).
 * Resolves with the killed session once it happened.
 */
export function killBrowserAt(
  engine: EngineStack,
  jobId: string,
  stepIndex: number,
  point: FaultPoint,
): Promise<{ sessionId: string; at: number }> {
  const events = engine.stack.lambdas.events;
  return new Promise((done, fail) => {
    const listener = (e: FaultPointEvent): void => {
      if (e.functionName !== RUN_STEP || e.info.jobId !== jobId) return;
      if (e.info.stepIndex !== stepIndex || e.point !== point) return;
      events.off('fault-point', listener);
      const sessionId = liveSessionOf(engine, jobId);
      if (!sessionId) {
        fail(new Error(`job ${jobId} has no running browser session at ${point} of step ${stepIndex}`));
        return;
      }
      const at = Date.now();
      // The SIGKILL is sent synchronously, before the worker is let past the point.
      engine.stack.anchor.killBrowser(sessionId).then(() => done({ sessionId, at }), fail);
    };
    events.on('fault-point', listener);
  });
}

/**
 * SIGKILLs the job's browser `delayMs` after RunStep starts working on step `stepIndex`
 * (the invocation that follows the previous step's checkpoint, on the same warm worker): the
 * kill lands while the step reattaches and checks its page, an arbitrary instant mid-step.
 */
export function killBrowserAsStepStarts(
  engine: EngineStack,
  jobId: string,
  stepIndex: number,
  delayMs: number,
): Promise<{ sessionId: string; at: number }> {
  const events = engine.stack.lambdas.events;
  return new Promise((done, fail) => {
    let worker: number | undefined;
    const onPoint = (e: FaultPointEvent): void => {
      if (e.functionName !== RUN_STEP || e.info.jobId !== jobId) return;
      if (e.info.stepIndex === stepIndex - 1 && e.point === 'during-checkpoint') worker = e.pid;
    };
    const onStart = (e: { functionName: string; pid: number }): void => {
      if (worker === undefined || e.functionName !== RUN_STEP || e.pid !== worker) return;
      events.off('fault-point', onPoint);
      events.off('invocation-started', onStart);
      setTimeout(() => {
        const sessionId = liveSessionOf(engine, jobId);
        if (!sessionId) {
          fail(new Error(`job ${jobId} has no running browser session at step ${stepIndex}`));
          return;
        }
        const at = Date.now();
        engine.stack.anchor.killBrowser(sessionId).then(() => done({ sessionId, at }), fail);
      }, delayMs);
    };
    events.on('fault-point', onPoint);
    events.on('invocation-started', onStart);
  });
}
