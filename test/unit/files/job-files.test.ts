import { describe, expect, it } from 'vitest';
import { DownloadFailedError } from '../../../lambdas/lib/browser/errors.ts';
import type { VolumeApi, VolumeFile } from '../../../lambdas/lib/browser/volumes.ts';
import { FileChangedError, FileNotArrivedError, FilePathError } from '../../../lambdas/lib/files/errors.ts';
import { sha256Hex } from '../../../lambdas/lib/files/evidence.ts';
import { createJobFiles, NO_DOWNLOADS, type StepDownloads } from '../../../lambdas/lib/files/job-files.ts';

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

/** The step's page, in memory: the click "saves" `bytes` as download `guid` of session `sess-1`. */
function savedBy(volume: ReturnType<typeof memoryVolume>, guid: string, bytes: Buffer): StepDownloads {
  return {
    sessionId: 'sess-1',
    capture: async (trigger) => {
      await trigger();
      volume.files.set(`downloads/sess-1/${guid}`, bytes);
      return { guid, suggestedFilename: 'invoice.pdf', url: 'http://127.0.0.1:9/invoice.pdf' };
    },
  };
}

describe('Function: createJobFiles', () => {
  it("copies the download the step's click started into the job's folder and answers its evidence", async () => {
    const volume = memoryVolume();
    // Other downloads of the same name, of this session before and of another session at once:
    // none is the one this click started.
    volume.files.set('downloads/invoice.pdf', Buffer.from('%PDF-1.4 someone else'));
    volume.files.set('downloads/sess-1/old-guid', Buffer.from('%PDF-1.4 an earlier attempt'));
    const files = createJobFiles({
      volumes: volume,
      volumeName: 'v',
      tenantId: 'acme',
      jobId: 'j1',
      pollMs: 1,
      downloads: savedBy(volume, 'guid-1', PDF),
    });
    const evidence = await files.download('invoice.pdf', async () => {
      volume.files.set('downloads/sess-2/guid-2', Buffer.from('%PDF-1.4 another tenant, same name'));
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

  it('gives up with a retryable error when the click starts no download, and copies nothing', async () => {
    const volume = memoryVolume();
    const files = createJobFiles({
      volumes: volume,
      volumeName: 'v',
      tenantId: 'acme',
      jobId: 'j1',
      pollMs: 1,
      downloads: {
        sessionId: 'sess-1',
        capture: async () => {
          throw new DownloadFailedError('the click started no download within 20 ms');
        },
      },
    });
    volume.files.set('downloads/x.pdf', Buffer.from('%PDF-1.4 not this one'));
    const err = await files
      .download('x.pdf', async () => undefined, { timeoutMs: 20 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileNotArrivedError);
    expect((err as FileNotArrivedError).retryable).toBe(true);
    expect(await files.find('x.pdf')).toBeUndefined();
  });

  it('refuses a download outside a step of RunStep', async () => {
    const files = createJobFiles({
      volumes: memoryVolume(),
      volumeName: 'v',
      tenantId: 'acme',
      jobId: 'j1',
      downloads: NO_DOWNLOADS,
    });
    await expect(files.download('x.pdf', async () => undefined)).rejects.toBeInstanceOf(FilePathError);
  });

  it("refuses to read another tenant's or job's file, and a file whose bytes changed", async () => {
    const volume = memoryVolume();
    volume.files.set('tenants/globex/jobs/j1/invoice.pdf', PDF);
    volume.files.set('tenants/acme/jobs/j1/invoice.pdf', PDF);
    const files = createJobFiles({
      volumes: volume,
      volumeName: 'v',
      tenantId: 'acme',
      jobId: 'j1',
      downloads: NO_DOWNLOADS,
    });
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
