/** Errors of files carried between sessions (`lambdas/lib/files/`). */
import { BelayError } from '../errors.ts';

/**
 * A path a step asked for lies outside the job's folder in the team's volume (another job's,
 * another tenant's, or not a plain file name). Not retryable: the playbook must change.
 */
export class FilePathError extends BelayError {
  readonly tenantId: string;
  readonly jobId: string;
  constructor(message: string, context: { tenantId: string; jobId: string }, options?: ErrorOptions) {
    super('FilePathError', 'file-path-refused', message, options);
    this.tenantId = context.tenantId;
    this.jobId = context.jobId;
  }
}

/** The file a step waited for did not arrive in the volume in time. Retryable: the step runs again. */
export class FileNotArrivedError extends BelayError {
  readonly fileName: string;
  constructor(message: string, context: { name: string }, options?: ErrorOptions) {
    super('FileNotArrivedError', 'file-not-arrived', message, { ...options, retryable: true });
    this.fileName = context.name;
  }
}

/** A job's file no longer has the bytes its evidence recorded. Not retryable: a person looks. */
export class FileChangedError extends BelayError {
  readonly path: string;
  constructor(message: string, context: { path: string }, options?: ErrorOptions) {
    super('FileChangedError', 'file-changed', message, options);
    this.path = context.path;
  }
}
