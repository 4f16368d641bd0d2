/** Errors of the real applications the tests run (WordPress on MariaDB and PHP's built-in server). */
import { BelayError } from '../../lambdas/lib/errors.ts';

/** A Debian package the real applications need is not installed. */
export class RealAppMissingError extends BelayError {
  readonly missing: string[];
  constructor(missing: string[]) {
    super(
      'RealAppMissingError',
      'real-app-missing',
      `the real applications need ${missing.join(', ')}: run \`bash scripts/install-real-apps.sh\``,
    );
    this.missing = missing;
  }
}

/** A process of a real application (the database, the web server) did not start, or not in time. */
export class RealAppStartError extends BelayError {
  readonly process: string;
  constructor(process: string, message: string, context: { log?: string } = {}, options?: ErrorOptions) {
    const log = context.log?.trim();
    super(
      'RealAppStartError',
      'real-app-start',
      `${process}: ${message}${log ? `; its log ends: ${log.slice(-600)}` : ''}`,
      options,
    );
    this.process = process;
  }
}

/** A real application started but could not be set up (installed, configured). */
export class RealAppSetupError extends BelayError {
  readonly step: string;
  constructor(step: string, message: string, options?: ErrorOptions) {
    super('RealAppSetupError', 'real-app-setup', `${step}: ${message}`, options);
    this.step = step;
  }
}
