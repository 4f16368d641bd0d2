import { BelayError } from '../../errors.ts';

/** The API's error envelope, as an MCP tool reports it. */
export interface ApiFailure {
  status: number;
  code: string;
  message: string;
  details?: unknown;
}

/**
 * The API refused a tool's call (4xx) or failed (5xx): the tool answers with an MCP tool error
 * carrying the API's own code and message (a 5xx says nothing of its cause, as the API does).
 */
export class ApiCallError extends BelayError {
  readonly failure: ApiFailure;
  constructor(failure: ApiFailure, options?: ErrorOptions) {
    super('ApiCallError', failure.code, failure.message, {
      ...options,
      retryable: failure.status === 429 || failure.status >= 500,
    });
    this.failure = failure;
  }
}

/** The API could not be reached at all (`belay mcp` over HTTP): where, and why. */
export class ApiUnreachableError extends BelayError {
  readonly url: string;
  constructor(url: string, why: string, options?: ErrorOptions) {
    super(
      'ApiUnreachableError',
      'api-unreachable',
      `cannot reach Belay at ${url} (${why}): is it running, and is the URL right?`,
      { ...options, retryable: true },
    );
    this.url = url;
  }
}
