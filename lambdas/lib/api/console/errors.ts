import { ApiError, type ApiErrorOptions } from '../errors.ts';

/** 403: a console request that changes something came without the page's CSRF token. */
export class CsrfError extends ApiError {
  constructor(options?: ApiErrorOptions) {
    super(
      'CsrfError',
      403,
      'csrf',
      'reload the console page and try again (its CSRF token is missing or stale)',
      options,
    );
  }
}
