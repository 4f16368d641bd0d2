/**
 * Errors of the HTTP API. Each carries the HTTP status, a stable machine-readable `code`, a
 * message that tells the caller what to fix, and optional `details` (for validation: the
 * fields at fault). They have the shape `@middy/http-error-handler` expects (`statusCode`,
 * `expose`, `headers`); the `errorEnvelope` middleware turns them into
 * `{"error": {"code", "message", "details"}}`. A 5xx never exposes its message.
 */

import { BelayError } from '../errors.ts';
import { redact, redactText, type SecretScope } from '../redact.ts';

/** One field a request got wrong, by its dotted path (`inputs.items.0.sku`, `accounts.shop`, `header:Idempotency-Key`). */
export interface FieldIssue {
  field: string;
  message: string;
}

export interface ApiErrorOptions extends ErrorOptions {
  details?: unknown;
  headers?: Record<string, string>;
}

/** Base class of every error the API answers with. */
export class ApiError extends BelayError {
  readonly statusCode: number;
  readonly code: string;
  readonly details: unknown;
  readonly expose: boolean;
  readonly headers: Record<string, string>;
  /** @param name the subclass's name (`BadRequestError`); `code` is also the error's `reason`. */
  constructor(
    name: string,
    statusCode: number,
    code: string,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    const { details, headers, ...errorOptions } = options;
    super(name, code, message, { ...errorOptions, retryable: statusCode === 429 || statusCode >= 500 });
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.expose = statusCode < 500;
    this.headers = headers ?? {};
  }
}

/** 400: the request is malformed (bad JSON, wrong types, missing fields); `details` lists the fields. */
export class BadRequestError extends ApiError {
  constructor(code: string, message: string, options?: ApiErrorOptions) {
    super('BadRequestError', 400, code, message, options);
  }
}

/** 401: no API key, or one that is unknown or revoked. */
export class UnauthorizedError extends ApiError {
  constructor(
    message = 'send a valid API key as "Authorization: Bearer blk_..."',
    options?: ApiErrorOptions,
  ) {
    super('UnauthorizedError', 401, 'unauthorized', message, {
      ...options,
      headers: { 'WWW-Authenticate': 'Bearer', ...options?.headers },
    });
  }
}

/** 403: the key is valid but lacks the role this action needs. */
export class ForbiddenError extends ApiError {
  readonly requiredRole: string;
  constructor(requiredRole: string, options?: ApiErrorOptions) {
    super('ForbiddenError', 403, 'forbidden', `this action needs an API key with the ${requiredRole} role`, {
      ...options,
      details: { requiredRole },
    });
    this.requiredRole = requiredRole;
  }
}

/**
 * 403: the key holds the role, but this answer is not its to give: an agent's answer to a
 * person's wait where the deployment does not allow it, the job's own submitter approving its
 * own write, or a question answered by a key that did not submit the job.
 */
export class AnswerRefusedError extends ApiError {
  constructor(code: string, message: string, options?: ApiErrorOptions) {
    super('AnswerRefusedError', 403, code, message, options);
  }
}

/** 404: no such resource for this tenant (another tenant's job reads exactly like a missing one). */
export class NotFoundError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super('NotFoundError', 404, 'not_found', message, options);
  }
}

/** 405: the path exists, the method does not. */
export class MethodNotAllowedError extends ApiError {
  constructor(method: string, allowed: string[], options?: ApiErrorOptions) {
    super(
      'MethodNotAllowedError',
      405,
      'method_not_allowed',
      `${method} is not allowed here; use ${allowed.join(', ')}`,
      {
        ...options,
        headers: { Allow: allowed.join(', '), ...options?.headers },
      },
    );
  }
}

/** 409: the request conflicts with the job's state (a reused job id, a step that is not waiting, a finished job). */
export class ConflictError extends ApiError {
  constructor(code: string, message: string, options?: ApiErrorOptions) {
    super('ConflictError', 409, code, message, options);
  }
}

/** 410: what the request names existed but is over (an expired account connection). */
export class GoneError extends ApiError {
  constructor(code: string, message: string, options?: ApiErrorOptions) {
    super('GoneError', 410, code, message, options);
  }
}

/** 413: the body is larger than the API accepts. */
export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number, options?: ApiErrorOptions) {
    super(
      'PayloadTooLargeError',
      413,
      'payload_too_large',
      `request bodies are limited to ${limitBytes} bytes`,
      {
        ...options,
        details: { limitBytes },
      },
    );
  }
}

/** 422: well-formed, but refers to something that does not exist or does not fit (playbook, inputs, accounts, code). */
export class UnprocessableError extends ApiError {
  constructor(code: string, message: string, options?: ApiErrorOptions) {
    super('UnprocessableError', 422, code, message, options);
  }
}

/** 429: the key has used up its request allowance; `Retry-After` says when to come back. */
export class RateLimitedError extends ApiError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, options?: ApiErrorOptions) {
    super('RateLimitedError', 429, 'rate_limited', `too many requests; retry after ${retryAfterSeconds} s`, {
      ...options,
      details: { retryAfterSeconds },
      headers: { 'Retry-After': String(retryAfterSeconds), ...options?.headers },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 503: a dependency (DynamoDB, Step Functions) failed in a way worth retrying. The message is not exposed. */
export class ServiceUnavailableError extends ApiError {
  constructor(message: string, options?: ApiErrorOptions) {
    super('ServiceUnavailableError', 503, 'unavailable', message, {
      ...options,
      headers: { 'Retry-After': '2', ...options?.headers },
    });
  }
}

/** The body of every error response. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** What a 5xx says: nothing about the cause. */
export const INTERNAL_ERROR_BODY: ErrorBody = {
  error: { code: 'internal_error', message: 'the request failed on our side; retry later' },
};

export const UNAVAILABLE_ERROR_BODY: ErrorBody = {
  error: { code: 'unavailable', message: 'a backing service is temporarily unavailable; retry later' },
};

/** At most this many field issues in an error's details; the rest are counted, not listed. */
export const MAX_ERROR_DETAILS = 20;
/** Longest text of one detail (a field's path or message). */
const MAX_DETAIL_TEXT = 200;
/** Largest details object that is not a list (JSON bytes); larger ones are left out. */
const MAX_DETAILS_BYTES = 4096;

function clip(text: string): string {
  return text.length > MAX_DETAIL_TEXT ? `${text.slice(0, MAX_DETAIL_TEXT)}...` : text;
}

/**
 * Details as a response carries them, bounded: a request with thousands of unknown fields
 * gets the first `MAX_ERROR_DETAILS` issues and a count of the rest, never an error larger
 * than the request.
 */
export function boundedDetails(details: unknown): unknown {
  if (Array.isArray(details)) {
    const shown = details.slice(0, MAX_ERROR_DETAILS).map((d) => {
      if (d && typeof d === 'object' && 'field' in d && 'message' in d) {
        const issue = d as FieldIssue;
        return { field: clip(String(issue.field)), message: clip(String(issue.message)) };
      }
      return typeof d === 'string' ? clip(d) : d;
    });
    const more = details.length - shown.length;
    return more > 0
      ? [...shown, { field: '(more)', message: `${more} more issues not listed; fix these first` }]
      : shown;
  }
  if (details !== null && typeof details === 'object') {
    return Buffer.byteLength(JSON.stringify(details), 'utf8') > MAX_DETAILS_BYTES
      ? { truncated: true }
      : details;
  }
  return typeof details === 'string' ? clip(details) : details;
}

/**
 * The response body of an error: the API error's own fields for a 4xx, a fixed text for a 5xx.
 * Texts are redacted in `scope`: the tenant the request acts for (see `requestTenant`).
 */
export function errorBody(
  err: unknown,
  scope: SecretScope,
): {
  statusCode: number;
  body: ErrorBody;
  headers: Record<string, string>;
} {
  if (err instanceof ApiError && err.expose) {
    // Messages may quote what the caller sent (a malformed body): masked like any response.
    const body: ErrorBody = { error: { code: err.code, message: redactText(err.message, scope) } };
    if (err.details !== undefined) body.error.details = redact(boundedDetails(err.details), scope);
    return { statusCode: err.statusCode, body, headers: err.headers };
  }
  if (err instanceof ServiceUnavailableError) {
    return { statusCode: 503, body: UNAVAILABLE_ERROR_BODY, headers: err.headers };
  }
  return { statusCode: 500, body: INTERNAL_ERROR_BODY, headers: {} };
}
