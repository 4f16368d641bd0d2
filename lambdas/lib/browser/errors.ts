import { BelayError } from '../errors.ts';

/**
 * Errors of the browser layer. The names are what the state machine's `Retry`/`Catch` match:
 * `SessionUnavailableError` is transient (retry), `SessionGoneError` is not (open a new session
 * from the profile), `BrowserRequestError` is a caller mistake (fail).
 */

/** The session no longer exists: 404, ended, or its CDP endpoint refused the session. */
export class SessionGoneError extends BelayError {
  readonly sessionId: string;
  /** Last known status (`completed`, `failed`, ...) when the API reported one. */
  readonly status?: string;
  constructor(message: string, context: { sessionId: string; status?: string }, options?: ErrorOptions) {
    super('SessionGoneError', 'session-gone', message, options);
    this.sessionId = context.sessionId;
    if (context.status !== undefined) this.status = context.status;
  }
}

/** The browser service did not answer properly (5xx, 429, timeout, connection error). Retryable. */
export class SessionUnavailableError extends BelayError {
  readonly sessionId?: string;
  readonly operation: string;
  constructor(message: string, context: { sessionId?: string; operation: string }, options?: ErrorOptions) {
    super('SessionUnavailableError', 'session-unavailable', message, { ...options, retryable: true });
    if (context.sessionId !== undefined) this.sessionId = context.sessionId;
    this.operation = context.operation;
  }
}

/** The service refused the request itself (400, 401, 403, 422, unknown profile): retrying will not help. */
export class BrowserRequestError extends BelayError {
  readonly operation: string;
  readonly status?: number;
  constructor(message: string, context: { operation: string; status?: number }, options?: ErrorOptions) {
    super('BrowserRequestError', 'browser-request', message, options);
    this.operation = context.operation;
    if (context.status !== undefined) this.status = context.status;
  }
}

/** A required setting (environment variable) is missing or invalid. */
export class BrowserConfigError extends BelayError {
  readonly variable: string;
  constructor(message: string, context: { variable: string }, options?: ErrorOptions) {
    super('BrowserConfigError', 'browser-config', message, options);
    this.variable = context.variable;
  }
}

/**
 * The click a step made started no download, or the browser did not finish it in time (or
 * canceled it). Retryable: the step runs again (a download is a read).
 */
export class DownloadFailedError extends BelayError {
  constructor(message: string, options?: ErrorOptions) {
    super('DownloadFailedError', 'download-failed', message, { ...options, retryable: true });
  }
}
