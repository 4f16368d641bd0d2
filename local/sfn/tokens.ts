/**
 * Task tokens for `.waitForTaskToken` states: minting, the wait, and the SendTask* answers.
 */
import { randomBytes } from 'node:crypto';
import {
  InvalidOutputError,
  InvalidTokenError,
  TaskDoesNotExistError,
  TaskTimedOutError,
  ValidationError,
} from './errors.ts';
import { MAX_PAYLOAD_BYTES } from './limits.ts';
import type { RunnerRegistry } from './registry.ts';

const PREFIX = 'AQB';
const TOKEN_SHAPE = /^AQB[A-Za-z0-9_-]{64}$/;

/** What a waiting task is told when its token is answered. */
export interface TokenListener {
  success(output: unknown): void;
  failure(error: string | undefined, cause: string | undefined): void;
  heartbeat(): void;
}

type TokenStatus = 'minted' | 'waiting' | 'done';

interface TokenRecord {
  executionArn: string;
  status: TokenStatus;
  listener?: TokenListener;
}

/**
 * Every token the runner issued. A token is `minted` when `$$.Task.Token` is read, `waiting` once
 * its task claims it, and `done` when it was answered, its task timed out or failed, or its
 * execution ended. Answers to a `done` token get `TaskTimedOut`, as AWS answers them.
 */
export class TaskTokens {
  private readonly records = new Map<string, TokenRecord>();

  /**
   * @param memory where issued tokens are remembered across restarts of the runner: a token
   * an earlier run issued belongs to a task that ended with that run (`TaskTimedOut`)
   */
  constructor(private readonly memory?: Pick<RunnerRegistry, 'recordToken' | 'issuedEarlier'>) {}

  /** Issues a new opaque token for an execution. */
  mint(executionArn: string): string {
    const token = PREFIX + randomBytes(48).toString('base64url');
    this.records.set(token, { executionArn, status: 'minted' });
    this.memory?.recordToken(token, Date.now());
    return token;
  }

  /** Finds a token of this execution, still unclaimed, anywhere in a (task input) value. */
  findMinted(value: unknown, executionArn: string): string | undefined {
    if (typeof value === 'string') {
      const r = this.records.get(value);
      return r && r.status === 'minted' && r.executionArn === executionArn ? value : undefined;
    }
    if (typeof value !== 'object' || value === null) return undefined;
    for (const v of Array.isArray(value) ? value : Object.values(value)) {
      const found = this.findMinted(v, executionArn);
      if (found) return found;
    }
    return undefined;
  }

  /** Starts the wait on a minted token. */
  claim(token: string, listener: TokenListener): void {
    const r = this.records.get(token);
    if (!r) throw new TaskDoesNotExistError();
    r.status = 'waiting';
    r.listener = listener;
  }

  /** Ends the wait on a token (answered, timed out, failed); later answers get `TaskTimedOut`. */
  finish(token: string): void {
    const r = this.records.get(token);
    if (!r) return;
    r.status = 'done';
    r.listener = undefined;
  }

  /** Invalidates every token of an execution (it ended or was stopped). */
  closeExecution(executionArn: string): void {
    for (const r of this.records.values()) {
      if (r.executionArn === executionArn && r.status !== 'done') {
        r.status = 'done';
        r.listener = undefined;
      }
    }
  }

  /** `SendTaskSuccess`: `output` is JSON text. */
  sendSuccess(token: string, output: string): void {
    if (Buffer.byteLength(output, 'utf8') > MAX_PAYLOAD_BYTES) {
      throw new ValidationError(
        `1 validation error detected: Value at 'output' failed to satisfy constraint: Member must have length less than or equal to ${MAX_PAYLOAD_BYTES}`,
      );
    }
    const listener = this.waiting(token);
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch (err) {
      throw new InvalidOutputError(`Invalid Output: ${(err as Error).message}`, { cause: err });
    }
    this.finish(token);
    listener.success(value);
  }

  /** `SendTaskFailure`. */
  sendFailure(token: string, error?: string, cause?: string): void {
    const listener = this.waiting(token);
    this.finish(token);
    listener.failure(error, cause);
  }

  /** `SendTaskHeartbeat`. */
  sendHeartbeat(token: string): void {
    this.waiting(token).heartbeat();
  }

  private waiting(token: string): TokenListener {
    if (!TOKEN_SHAPE.test(token)) throw new InvalidTokenError();
    const r = this.records.get(token);
    if (!r) {
      if (this.memory?.issuedEarlier(token)) throw new TaskTimedOutError();
      throw new TaskDoesNotExistError();
    }
    if (r.status !== 'waiting' || !r.listener) throw new TaskTimedOutError();
    return r.listener;
  }
}
