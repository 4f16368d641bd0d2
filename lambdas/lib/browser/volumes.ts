/**
 * Anchor's Volumes and Volume Files API through the `anchorbrowser` SDK's client. The SDK this
 * project pins (0.16.3) has no `volumes` resource, so the calls go through the client's own
 * `get`/`post` (its auth header, retries, timeouts and typed errors) at the paths of Anchor's
 * API reference: `POST/GET /v1/volumes`, `GET /v1/volumes/{id}/files`,
 * `POST /v1/volumes/{id}/files` (multipart `file` + `path`) and
 * `GET /v1/volumes/{id}/files/download` (a pre-signed URL, then a plain GET of it).
 */
import type AnchorbrowserClient from 'anchorbrowser';
import { ConflictError } from 'anchorbrowser/core/error';
import { BrowserRequestError } from './errors.ts';
import { translateApiError } from './translate.ts';

/** One file in a volume, as the Files API lists it. */
export interface VolumeFile {
  /** Relative to the volume root (`downloads/invoice.pdf`). */
  path: string;
  size: number;
  /** When it was last written, as the API reports it (a download over an older file of its name changes it). */
  updatedAt?: string;
}

/** The team's volumes (Anchor's), as Belay uses them. */
export interface VolumeApi {
  /** The id of the team's volume `name`, created when the team has none of that name. */
  ensure(name: string): Promise<string>;
  /** The files under `folder` (recursively); none when the folder does not exist. */
  listFiles(volumeId: string, folder: string): Promise<VolumeFile[]>;
  readFile(volumeId: string, path: string): Promise<Buffer>;
  writeFile(volumeId: string, path: string, bytes: Uint8Array): Promise<void>;
}

interface VolumeRecord {
  id: string;
  name: string;
  status?: string;
}

interface Call {
  timeout: number;
  maxRetries: number;
}

/** The volume API over a lazily built SDK client (`client()`), with the adapter's call options. */
export function sdkVolumeApi(client: () => Promise<AnchorbrowserClient>, call: Call): VolumeApi {
  const ids = new Map<string, string>();
  const wrap = async <T>(what: () => Promise<T>): Promise<T> => {
    try {
      return await what();
    } catch (err) {
      throw translateApiError(err, 'volumes');
    }
  };
  const find = async (name: string): Promise<VolumeRecord | undefined> => {
    const res = await (await client()).get<{ data?: { items?: VolumeRecord[] } }>('/v1/volumes', call);
    return res.data?.items?.find((v) => v.name === name);
  };
  return {
    async ensure(name: string): Promise<string> {
      const known = ids.get(name);
      if (known) return known;
      const id = await wrap(async () => {
        const existing = await find(name);
        if (existing) return existing.id;
        try {
          const res = await (await client()).post<{ data?: VolumeRecord }>('/v1/volumes', {
            ...call,
            body: { name },
          });
          if (!res.data?.id) throw new Error('create volume: response without id');
          return res.data.id;
        } catch (err) {
          // Created meanwhile by another worker: the team holds it now.
          if (err instanceof ConflictError) {
            const again = await find(name);
            if (again) return again.id;
          }
          throw err;
        }
      });
      ids.set(name, id);
      return id;
    },

    listFiles(volumeId: string, folder: string): Promise<VolumeFile[]> {
      return wrap(async () => {
        const res = await (await client()).get<{
          data?: { items?: { path: string; type?: string; size?: number; updated_at?: string }[] };
        }>(`/v1/volumes/${encodeURIComponent(volumeId)}/files`, {
          ...call,
          query: { path: folder, recursive: 'true' },
        });
        return (res.data?.items ?? [])
          .filter((i) => i.type !== 'directory')
          .map((i) => ({
            path: i.path,
            size: i.size ?? 0,
            ...(i.updated_at ? { updatedAt: i.updated_at } : {}),
          }));
      });
    },

    readFile(volumeId: string, path: string): Promise<Buffer> {
      return wrap(async () => {
        const res = await (await client()).get<{ data?: { url?: string } }>(
          `/v1/volumes/${encodeURIComponent(volumeId)}/files/download`,
          { ...call, query: { path } },
        );
        const url = res.data?.url;
        if (!url) throw new Error('download file: response without url');
        const got = await fetch(url, { signal: AbortSignal.timeout(call.timeout) });
        if (!got.ok) {
          throw new BrowserRequestError(`download file: the file URL answered ${got.status}`, {
            operation: 'volumes',
            status: got.status,
          });
        }
        return Buffer.from(await got.arrayBuffer());
      });
    },

    writeFile(volumeId: string, path: string, bytes: Uint8Array): Promise<void> {
      return wrap(async () => {
        const form = new FormData();
        form.set('path', path);
        form.set('file', new Blob([new Uint8Array(bytes)]), path.split('/').pop() ?? 'file');
        await (await client()).post(`/v1/volumes/${encodeURIComponent(volumeId)}/files`, {
          ...call,
          body: form,
        });
      });
    },
  };
}

/** A volume API that refuses every call: for browsers with no volumes (fakes, simulations). */
export const NO_VOLUMES: VolumeApi = {
  ensure: noVolumes,
  listFiles: noVolumes,
  readFile: noVolumes,
  writeFile: noVolumes,
};

async function noVolumes(): Promise<never> {
  throw new BrowserRequestError('this browser provider has no volumes', { operation: 'volumes' });
}
