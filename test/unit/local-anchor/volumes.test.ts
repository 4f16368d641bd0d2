import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../local/anchor/errors.ts';
import { rewriteDownloadBehavior } from '../../../local/anchor/proxy.ts';
import { MAX_VOLUMES_PER_TEAM, VolumeStore, volumePath } from '../../../local/anchor/volumes.ts';

describe('Class: VolumeStore (local Anchor service)', () => {
  let dir: string;
  let store: VolumeStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'belay-volstore-'));
    store = new VolumeStore(dir);
    await store.init();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps a folder per volume, with downloads/, and refuses the team's 11th", async () => {
    for (let i = 0; i < MAX_VOLUMES_PER_TEAM; i++) await store.create(`v${i}`);
    const list = await store.list();
    expect(list).toHaveLength(10);
    for (const v of list) expect(existsSync(store.downloadsDir(v.id))).toBe(true);
    const err = await store.create('eleventh').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(403);
    expect((err as ApiError).message).toMatch(/at most 10 volumes/);
    expect(await store.list()).toHaveLength(10);
  });

  it.each([['bad name!'], [''], ['a'.repeat(65)], [42]])('refuses the name %j with a 400', async (name) => {
    await expect(store.create(name)).rejects.toMatchObject({ status: 400 });
    expect(await store.list()).toEqual([]);
  });

  it('refuses a second volume of one name with a 409', async () => {
    await store.create('reports');
    await expect(store.create('reports')).rejects.toMatchObject({ status: 409 });
  });

  it('writes and lists files under the volume root, never outside it', async () => {
    const v = await store.create('files');
    await store.writeFile(v.id, 'a/b.txt', Buffer.from('hi'));
    expect(await store.listFiles(v.id, undefined, true)).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'a/b.txt', size: 2, type: 'file' })]),
    );
    await expect(store.writeFile(v.id, '../../x.txt', Buffer.from('x'))).rejects.toMatchObject({
      status: 400,
    });
    expect(existsSync(join(dir, 'x.txt'))).toBe(false);
    await expect(store.readFile(v.id, 'a/none.txt')).rejects.toMatchObject({ status: 404 });
  });

  it.each(['..', 'a/../b', 'a//b', './a', ''])('volumePath refuses %j', (p) => {
    expect(() => volumePath(p)).toThrow(ApiError);
  });
});

describe('Function: rewriteDownloadBehavior (CDP relay of a session with volumes)', () => {
  const asked = Buffer.from(
    JSON.stringify({
      id: 7,
      method: 'Browser.setDownloadBehavior',
      params: { behavior: 'allowAndName', downloadPath: '/tmp/playwright-artifacts', eventsEnabled: true },
    }),
  );

  it("puts the session's folder of the read-write volume's downloads/ in place of the client's, files named by download id", () => {
    const out = JSON.parse(
      String(rewriteDownloadBehavior(asked, false, { downloadPath: '/v/files/downloads/sess-1' })),
    );
    expect(out).toEqual({
      id: 7,
      method: 'Browser.setDownloadBehavior',
      params: { behavior: 'allowAndName', downloadPath: '/v/files/downloads/sess-1', eventsEnabled: true },
    });
  });

  it('refuses downloads when every mount is read-only', () => {
    const out = JSON.parse(String(rewriteDownloadBehavior(asked, false, {})));
    expect(out.params).toEqual({ behavior: 'deny', eventsEnabled: true });
  });

  it('passes any other message unchanged', () => {
    const other = Buffer.from(JSON.stringify({ id: 8, method: 'Page.navigate', params: { url: 'x' } }));
    expect(rewriteDownloadBehavior(other, false, {})).toBe(other);
  });
});
