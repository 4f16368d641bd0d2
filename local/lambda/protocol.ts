/**
 * IPC messages between the local Lambda runner and its worker processes.
 */
import type { FaultAckMessage, FaultPointMessage } from '../../lambdas/lib/fault.ts';

/** The Lambda context fields the runner sends with each invocation. */
export interface InvokeContextInit {
  awsRequestId: string;
  functionName: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  /** Epoch ms after which the runner kills the invocation. */
  deadlineMs: number;
}

/** Runner -> worker: run the handler once. */
export interface InvokeMessage {
  type: 'invoke';
  id: string;
  payload: unknown;
  context: InvokeContextInit;
}

/** Runner -> worker: exit now (cold mode after its one invocation). */
export interface ShutdownMessage {
  type: 'shutdown';
}

/** Worker -> runner: the module is loaded (or failed to load); invocations may be sent. */
export interface ReadyMessage {
  type: 'ready';
  initMs: number;
}

/** What one invocation used in its worker process. */
export interface InvocationUsage {
  /** The process's CPU time (user + system) during the invocation, ms. */
  cpuMs: number;
  /** The process's CPU time before the invocation began, ms: a fault point's `cpuMs` is on the same clock. */
  cpuStartMs: number;
  /** AWS calls sent during the invocation (each attempt), by `<client>.<command>`, e.g. `DynamoDB.Query`. */
  awsCalls: Record<string, number>;
}

/** Worker -> runner: the handler returned. */
export interface ResultMessage {
  type: 'result';
  id: string;
  ok: true;
  value: unknown;
  usage?: InvocationUsage;
}

/** Worker -> runner: the handler threw (or could not be loaded), in Lambda's error shape. */
export interface ErrorMessage {
  type: 'result';
  id: string;
  ok: false;
  errorType: string;
  errorMessage: string;
  trace: string[];
  usage?: InvocationUsage;
}

/** Worker -> runner: IAM refused one of the handler's AWS calls (what a CloudTrail denial would show). */
export interface IamRefusedMessage {
  type: 'iam-refused';
  action: string;
  resource: string;
  message: string;
}

/** The environment variable a worker reads its IAM policy from (JSON `EnforcementSpec`), then unsets. */
export const LOCAL_IAM_ENV = 'BELAY_LOCAL_IAM_POLICY';

export type ToWorker = InvokeMessage | ShutdownMessage | FaultAckMessage;
export type FromWorker = ReadyMessage | ResultMessage | ErrorMessage | FaultPointMessage | IamRefusedMessage;
