/**
 * Errors of the browser layer. The names are what the state machine's `Retry`/`Catch` match:
 * `SessionUnavailableError` is transient (retry), `SessionGoneError` is not (open a new session
 * from the profile), `BrowserRequestError` is a caller mistake (fail).
 */

/** The session no longer exists: 404, ended, or its CDP endpoint refused the session. */
export class SessionGoneError extends Error {
  readonly sessionId: string;
  /** Last known status (`completed`, `failed`, ...) when the API reported one. */
  readonly status?: string;
  constructor(message: string, context: { sessionId: string; status?: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SessionGoneError';
    this.sessionId = context.sessionId;
    if (context.status !== undefined) this.status = context.status;
  }
}

/** The browser service did not answer properly (5xx, 429, timeout, connection error). Retryable. */
export class SessionUnavailableError extends Error {
  readonly sessionId?: string;
  readonly operation: string;
  readonly retryable = true;
  constructor(message: string, context: { sessionId?: string; operation: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SessionUnavailableError';
    if (context.sessionId !== undefined) this.sessionId = context.sessionId;
    this.operation = context.operation;
  }
}

/** The service refused the request itself (400, 401, 403, 422, unknown profile): retrying will not help. */
export class BrowserRequestError extends Error {
  readonly operation: string;
  readonly status?: number;
  constructor(message: string, context: { operation: string; status?: number }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BrowserRequestError';
    this.operation = context.operation;
    if (context.status !== undefined) this.status = context.status;
  }
}

/** A required setting (environment variable) is missing or invalid. */
export class BrowserConfigError extends Error {
  readonly variable: string;
  constructor(message: string, context: { variable: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BrowserConfigError';
    this.variable = context.variable;
  }
}
