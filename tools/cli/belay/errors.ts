import { BelayError } from '../../../lambdas/lib/errors.ts';

/**
 * Exit codes of `belay`, for scripts:
 * 0 done (a watched job SUCCEEDED); 1 unexpected error; 2 bad usage; 3 not signed in or the key
 * was refused (401/403); 4 not found (404); 5 the request was refused (400/409/413/422);
 * 6 the job ended FAILED or CANCELLED; 7 Belay unreachable or unavailable (5xx, 429);
 * 10 the job waits for a person (`--wait` stops there).
 */
export const EXIT = Object.freeze({
  ok: 0,
  error: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  refused: 5,
  jobFailed: 6,
  unavailable: 7,
  waiting: 10,
});

/** An error the CLI prints as it is (what to fix), exiting with `exitCode`. */
export class CliError extends BelayError {
  readonly exitCode: number;
  constructor(message: string, exitCode: number, options?: ErrorOptions) {
    super('CliError', 'cli-error', message, options);
    this.exitCode = exitCode;
  }
}

/** An answer of the API that is not a success: its status, code and message. */
export class ApiCallError extends CliError {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details: unknown) {
    super(`${message} (HTTP ${status}${code ? `, ${code}` : ''})${hint(status)}`, exitFor(status));
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

function exitFor(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 429 || status >= 500) return EXIT.unavailable;
  return EXIT.refused;
}

function hint(status: number): string {
  if (status === 401) return '\n  the API key was refused: check BELAY_KEY, or run `belay login` again';
  if (status === 403)
    return '\n  your key lacks the role this needs: ask an admin for a key with it (`belay keys create`)';
  if (status === 429) return '\n  too many requests for this key: wait a moment and retry';
  return '';
}
