import { describe, expect, it } from 'vitest';
import { FilePathError } from '../../../lambdas/lib/files/errors.ts';
import { fileEvidence, sha256Hex } from '../../../lambdas/lib/files/evidence.ts';
import { jobFilePath, jobFolder, nameInJobFolder } from '../../../lambdas/lib/files/paths.ts';

describe('Function: jobFolder / jobFilePath', () => {
  it('maps a tenant and a job to their own folder of the volume', () => {
    expect(jobFolder('acme', 'job-1')).toBe('tenants/acme/jobs/job-1');
    expect(jobFilePath('acme', 'job-1', 'invoice-INV-5003-01.pdf')).toBe(
      'tenants/acme/jobs/job-1/invoice-INV-5003-01.pdf',
    );
  });

  it.each([
    ['..', 'job'],
    ['acme/other', 'job'],
    ['acme', '../job-2'],
    ['', 'job'],
    ['acme', 'a b'],
  ])('refuses tenant %j with job %j (not one path segment)', (tenant, job) => {
    expect(() => jobFolder(tenant, job)).toThrow(FilePathError);
  });

  it.each(['../x.pdf', 'a/b.pdf', '..', '.', '', 'x\0.pdf', 'back\\slash.pdf', 'a'.repeat(129)])(
    'refuses the file name %j',
    (name) => {
      expect(() => jobFilePath('acme', 'job-1', name)).toThrow(FilePathError);
    },
  );
});

describe('Function: nameInJobFolder', () => {
  it("answers the name of a file in the job's own folder", () => {
    expect(nameInJobFolder('acme', 'job-1', 'tenants/acme/jobs/job-1/x.pdf')).toBe('x.pdf');
  });

  it.each([
    ['another tenant', 'tenants/globex/jobs/job-1/x.pdf'],
    ['another job', 'tenants/acme/jobs/job-2/x.pdf'],
    ['a prefix of the job id', 'tenants/acme/jobs/job-10/x.pdf'],
    ['a climb out', 'tenants/acme/jobs/job-1/../job-2/x.pdf'],
    ['a sub-folder', 'tenants/acme/jobs/job-1/sub/x.pdf'],
    ['the shared downloads', 'downloads/x.pdf'],
  ])('refuses a path in %s, naming the folder it must be in', (_what, path) => {
    expect(() => nameInJobFolder('acme', 'job-1', path)).toThrow(/outside this job's folder|file name/);
    expect(() => nameInJobFolder('acme', 'job-1', path)).toThrow(FilePathError);
  });
});

describe('Function: fileEvidence', () => {
  it('records name, size and the SHA-256 of the bytes', () => {
    const bytes = Buffer.from('abc');
    expect(fileEvidence('a.txt', 'tenants/t/jobs/j/a.txt', bytes)).toEqual({
      name: 'a.txt',
      size: 3,
      sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      path: 'tenants/t/jobs/j/a.txt',
    });
    expect(sha256Hex(Buffer.from('abd'))).not.toBe(sha256Hex(bytes));
  });
});
