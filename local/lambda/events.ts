/**
 * Events of the local Lambda runner (`runner.events`), each with the worker's pid.
 */
import type { FaultPoint, FaultPointInfo } from '../../lambdas/lib/fault.ts';
import type { ExitReason } from './errors.ts';
import type { InvocationUsage } from './protocol.ts';

/** An invocation was handed to a worker (after its module loaded, for a new worker). */
export interface InvocationStartedEvent {
  functionName: string;
  requestId: string;
  pid: number;
  /** A new process (cold start). */
  cold: boolean;
  /** Module load time of the worker. */
  initMs?: number;
}

/** An invocation ended: returned, threw, or its process died. */
export interface InvocationEndedEvent {
  functionName: string;
  requestId: string;
  pid: number;
  /** From the invoke call, cold start included. */
  durationMs: number;
  outcome: 'success' | 'error' | 'died';
  /** The error name the invocation rejected with. */
  errorName?: string;
  reason?: ExitReason;
  /** What it used in its worker (absent when the worker died before answering). */
  usage?: InvocationUsage;
}

/** A handler reached a fault point (`fault-point`), or an armed fault killed it there (`fault-fired`). */
export interface FaultPointEvent {
  functionName: string;
  pid: number;
  requestId?: string;
  point: FaultPoint;
  info: FaultPointInfo;
  /** The worker process's CPU time so far, ms (on the clock of the invocation's `usage.cpuStartMs`). */
  cpuMs?: number;
}

/** A worker process started. */
export interface WorkerSpawnedEvent {
  functionName: string;
  pid: number;
}

/** A worker process exited. */
export interface WorkerExitedEvent {
  functionName: string;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  reason: ExitReason;
}

/** IAM refused an AWS call of a worker's handler (the call failed with `AccessDeniedException`). */
export interface IamRefusedEvent {
  functionName: string;
  pid: number;
  requestId?: string;
  action: string;
  resource: string;
  message: string;
}

/** Event map of the runner's EventEmitter. */
export interface LambdaRunnerEvents {
  'invocation-started': [InvocationStartedEvent];
  'invocation-ended': [InvocationEndedEvent];
  'fault-point': [FaultPointEvent];
  'fault-fired': [FaultPointEvent];
  'worker-spawned': [WorkerSpawnedEvent];
  'worker-exited': [WorkerExitedEvent];
  'iam-refused': [IamRefusedEvent];
}
