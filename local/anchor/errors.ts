/**
 * Errors of the local Anchor-compatible service. `ApiError`s become Anchor-shaped error
 * responses (`{ error: { code, message } }`) so the SDK raises its own typed errors.
 */

/** A request the API refuses; `status` is the HTTP status sent back. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** A session's browser could not be started. */
export class SessionStartError extends Error {
  readonly sessionId: string;
  constructor(message: string, context: { sessionId: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SessionStartError';
    this.sessionId = context.sessionId;
  }
}

/** A stored record (session or profile) is unreadable. */
export class RecordCorruptError extends Error {
  readonly file: string;
  constructor(message: string, context: { file: string }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RecordCorruptError';
    this.file = context.file;
  }
}
