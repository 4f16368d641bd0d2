/**
 * Where a job's files live in the team's volume: `tenants/<tenant>/jobs/<job>/<name>`. Every
 * path a step names is one of these, derived here from the job's own tenant and job ids; any
 * other path (another job's, another tenant's, `..`, a folder) is refused with
 * {@link FilePathError}, so one tenant's job never reads or writes another's file.
 */
import { FilePathError } from './errors.ts';

/** Tenant and job ids as the ledger keeps them: one path segment each. */
const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** A file name: one segment, no separators, not `.`/`..`, printable. */
const FILE_NAME = /^(?!\.{1,2}$)[A-Za-z0-9 _.()+-]{1,128}$/;

/** The job's folder in the volume (no trailing slash). */
export function jobFolder(tenantId: string, jobId: string): string {
  if (!ID.test(tenantId) || !ID.test(jobId)) {
    throw new FilePathError('tenant and job ids must each be one path segment of [A-Za-z0-9_.:-]', {
      tenantId,
      jobId,
    });
  }
  return `tenants/${tenantId}/jobs/${jobId}`;
}

/** The path of file `name` in the job's folder; a name that is not one plain segment is refused. */
export function jobFilePath(tenantId: string, jobId: string, name: string): string {
  const folder = jobFolder(tenantId, jobId);
  if (!FILE_NAME.test(name)) {
    throw new FilePathError(
      'a file name must be 1-128 of letters, digits, space and _.()+- with no folder in it',
      { tenantId, jobId },
    );
  }
  return `${folder}/${name}`;
}

/**
 * `path` checked to be a file directly in the job's folder (as evidence records it); returns
 * the file's name. A path in another job's or tenant's folder is refused.
 */
export function nameInJobFolder(tenantId: string, jobId: string, path: string): string {
  const prefix = `${jobFolder(tenantId, jobId)}/`;
  if (!path.startsWith(prefix)) {
    throw new FilePathError(`the path is outside this job's folder (${prefix})`, { tenantId, jobId });
  }
  const name = path.slice(prefix.length);
  jobFilePath(tenantId, jobId, name);
  return name;
}
