/**
 * Fault-injection hook for the local Lambda runner.
 *
 * Handlers call {@link faultPoint} at the instants where a crash matters (before a side effect, in
 * the middle of one, after it but before the checkpoint). In AWS, and anywhere the hook is not
 * enabled, it is a no-op. Under the local Lambda runner it reports the point over IPC and waits for
 * the runner's answer, so the runner can SIGKILL the process exactly there.
 */
import type { FaultPoint } from './playbooks/contract.ts';

export type { FaultPoint };

/** Set to `1` by the local Lambda runner in its worker processes. */
export const FAULT_HOOKS_ENV = 'BELAY_FAULT_HOOKS';

/** Where in a job a point was reached; an armed fault matches on these. */
export interface FaultPointInfo {
  jobId?: string;
  step?: string;
  stepIndex?: number;
  /** An agent step's action number (1-based), at `action-recorded` and `action-executed`. */
  action?: number;
}

/** Worker -> runner: a fault point was reached; the worker waits for the ack. */
export interface FaultPointMessage {
  type: 'fault-point';
  seq: number;
  point: FaultPoint;
  info: FaultPointInfo;
  /** The process's CPU time so far (user + system), ms: a benchmark splits an invocation's CPU at its points. */
  cpuMs?: number;
}

/** Runner -> worker: go on past fault point `seq`. */
export interface FaultAckMessage {
  type: 'fault-ack';
  seq: number;
}

let seq = 0;
const waiting = new Map<number, () => void>();
let listening = false;

function isAck(message: unknown): message is FaultAckMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === 'fault-ack' &&
    typeof (message as { seq?: unknown }).seq === 'number'
  );
}

function listen(): void {
  if (listening) return;
  listening = true;
  process.on('message', (message: unknown) => {
    if (!isAck(message)) return;
    const resume = waiting.get(message.seq);
    waiting.delete(message.seq);
    resume?.();
  });
}

/** True when this process runs under the local Lambda runner with fault hooks enabled. */
export function faultHooksEnabled(): boolean {
  return typeof process.send === 'function' && process.connected && process.env[FAULT_HOOKS_ENV] === '1';
}

/**
 * Marks a point where the local runner may kill this process. Resolves at once unless fault hooks
 * are enabled; then resolves when the runner acks (one IPC round trip), or never, because the
 * runner SIGKILLed the process.
 *
 * @example
 * await placeOrderPart1(page);
 * await faultPoint('mid-action', { jobId, step: 'place-order', stepIndex: 12 });
 * await placeOrderPart2(page);
 */
export function faultPoint(point: FaultPoint, info: FaultPointInfo = {}): Promise<void> {
  if (!faultHooksEnabled()) return Promise.resolve();
  listen();
  const id = ++seq;
  const message: FaultPointMessage = {
    type: 'fault-point',
    seq: id,
    point,
    info: {
      jobId: info.jobId,
      step: info.step,
      stepIndex: info.stepIndex,
      ...(info.action === undefined ? {} : { action: info.action }),
    },
    cpuMs: cpuSoFarMs(),
  };
  return new Promise<void>((resolve) => {
    waiting.set(id, resolve);
    process.send?.(message);
  });
}

function cpuSoFarMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
