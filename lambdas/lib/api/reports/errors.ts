import { BelayError } from '../../errors.ts';

/** Errors of the reports use case. */

/** More jobs in the period than one report adds up: the caller should ask for a shorter period. */
export class ReportTooLargeError extends BelayError {
  constructor(
    readonly limit: number,
    options?: ErrorOptions,
  ) {
    super(
      'ReportTooLargeError',
      'report-too-large',
      `the period has more than ${limit} jobs; ask for a shorter one`,
      options,
    );
  }
}
