import { describe, expect, it } from 'vitest';
import type { VolumeApi, VolumeFile } from '../../../lambdas/lib/browser/volumes.ts';
import { FileChangedError, FileNotArrivedError, FilePathError } from '../../../lambdas/lib/files/errors.ts';
import { sha256Hex } from '../../../lambdas/lib/files/evidence.ts';
import { createJobFiles } from '../../../lambdas/lib/files/job-files.ts';

/** An in-memory volume: path -> bytes. */
function memoryVolume(): VolumeApi & { files: Map<string, Buffer> } {
  const files = new Map<string, Buffer>();
  return {
    files,
    ensure: async () => 'vol-1',
    listFiles: async (_id, folder): Promise<VolumeFile[]> =>
      [...files.entries()]
        .filter(([p]) => p.startsWith(`${folder}/`))
        .map(([path, b]) => ({ path, size: b.length })),
    readFile: async (_id, path) => {
      const b = files.get(path);
      if (!b) throw new Error('not found');
      return b;
    },
    writeFile: async (_id, path, bytes) => {
      files.set(path, Buffer.from(bytes));
    },
  };
}

const PDF = Buffer.from('%PDF-1.4 invoice');

describe('Function: createJobFiles', () => {
  it("copies the new download into the job's folder and answers its evidence", async () => {
    const volume = memoryVolume();
    // Another job's earlier download of the same name is not this one.
    volume.files.set('downloads/invoice.pdf', Buffer.from('%PDF-1.4 someone else'));
    const files = createJobFiles({
      volumes: volume,
      volumeName: 'v',
      tenantId: 'acme',
      jobId: 'j1',
      pollMs: 1,
    });
    const evidence = await files.download('invoice.pdf', async () => {
      volume.files.set('downloads/invoice (1).pdf', PDF);
    });
    expect(evidence).toEqual({
      name: 'invoice.pdf',
      size: PDF.length,
      sha256: sha256Hex(PDF),
      path: 'tenants/acme/jobs/j1/invoice.pdf',
    });
    expect(volume.files.get('tenants/acme/jobs/j1/invoice.pdf')).toEqual(PDF);
    expect(await files.find('invoice.pdf')).toEqual(evidence);
    expect(Buffer.from(await files.read(evidence))).toEqual(PDF);
  });

  it('gives up with a retryable error when no new file arrives', async () => {
    const volume = memoryVolume();
    const files = createJobFiles({
      volumes: volume,
      volumeName: 'v',
      tenantId: 'acme',
      jobId: 'j1',
      pollMs: 1,
    });
    const err = await files
      .download('x.pdf', async () => undefined, { timeoutMs: 20 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileNotArrivedError);
    expect((err as FileNotArrivedError).retryable).toBe(true);
    expect(await files.find('x.pdf')).toBeUndefined();
  });

  it("refuses to read another tenant's or job's file, and a file whose bytes changed", async () => {
    const volume = memoryVolume();
    volume.files.set('tenants/globex/jobs/j1/invoice.pdf', PDF);
    volume.files.set('tenants/acme/jobs/j1/invoice.pdf', PDF);
    const files = createJobFiles({ volumes: volume, volumeName: 'v', tenantId: 'acme', jobId: 'j1' });
    await expect(
      files.read({ path: 'tenants/globex/jobs/j1/invoice.pdf', sha256: sha256Hex(PDF) }),
    ).rejects.toBeInstanceOf(FilePathError);
    await expect(
      files.read({ path: 'tenants/acme/jobs/j2/invoice.pdf', sha256: sha256Hex(PDF) }),
    ).rejects.toBeInstanceOf(FilePathError);
    volume.files.set('tenants/acme/jobs/j1/invoice.pdf', Buffer.from('%PDF-1.4 altered'));
    await expect(
      files.read({ path: 'tenants/acme/jobs/j1/invoice.pdf', sha256: sha256Hex(PDF) }),
    ).rejects.toBeInstanceOf(FileChangedError);
  });
});
