import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  findPlaybookFiles,
  playbookDirs,
  REPO_PLAYBOOKS_DIR,
} from '../../../lambdas/lib/playbooks/discovery/find.ts';
import { loadPlaybooks } from '../../../lambdas/lib/playbooks/discovery/load.ts';
import { registryModuleSource } from '../../../lambdas/lib/playbooks/discovery/registry-module.ts';
import {
  DuplicatePlaybookError,
  PlaybookDirectoryError,
  PlaybookFileError,
} from '../../../lambdas/lib/playbooks/errors.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'playbooks');
const dir = (name: string): string => join(FIXTURES, name);

async function failure(dirs: string[]): Promise<Error> {
  try {
    await loadPlaybooks(dirs);
  } catch (err) {
    return err as Error;
  }
  throw new Error('loadPlaybooks did not fail');
}

describe('Playbook discovery', () => {
  it('finds <name>/index.ts and <name>.playbook.yaml, skipping _ and . names', async () => {
    const files = await findPlaybookFiles([dir('ok')]);
    expect(files.map((f) => [f.file.slice(FIXTURES.length + 1), f.kind])).toEqual([
      ['ok/note.playbook.yaml', 'declarative'],
      ['ok/tiny/index.ts', 'module'],
    ]);
  });

  it('loads both kinds into one registry, with their files', async () => {
    const { registry, playbooks } = await loadPlaybooks([dir('ok')]);
    expect(registry.list().map((p) => p.id)).toEqual(['note@2', 'tiny@1']);
    expect(registry.sourceOf('note@2')).toBe('test/fixtures/playbooks/ok/note.playbook.yaml');
    const note = registry.get('note@2');
    expect(note.steps.map((s) => [s.id, s.kind, typeof s.probe])).toEqual([
      ['sign-in', 'read', 'undefined'],
      ['add-note', 'write', 'function'],
    ]);
    expect(note.inputSchema.safeParse({ text: 'x' }).success).toBe(true);
    expect(note.inputSchema.safeParse({ text: '' }).error?.issues[0]?.path).toEqual(['text']);
    const source = registryModuleSource({ playbooks });
    expect(source).toContain(`import playbook1 from ${JSON.stringify(join(dir('ok'), 'tiny', 'index.ts'))}`);
    expect(source).toContain('compileDeclarative({"name":"note"');
  });

  it('searches the repository folder first, then BELAY_PLAYBOOKS_DIRS, then the folders given', () => {
    expect(playbookDirs(['/c'], { BELAY_PLAYBOOKS_DIRS: '/a:/b/' })).toEqual([
      REPO_PLAYBOOKS_DIR,
      '/a',
      '/b',
      '/c',
    ]);
  });

  it('refuses two playbooks with one id across folders, naming both files', async () => {
    const error = await failure([dir('ok'), dir('dup')]);
    expect(error).toBeInstanceOf(DuplicatePlaybookError);
    expect(error.message).toContain(
      'test/fixtures/playbooks/ok/tiny/index.ts and test/fixtures/playbooks/dup/tiny/index.ts',
    );
  });

  it('names the file of a module with no default export, and of a write with no probe', async () => {
    const error = await failure([dir('bad-module')]);
    expect(error).toBeInstanceOf(PlaybookFileError);
    expect(error.message).toMatch(/^test\/fixtures\/playbooks\/bad-module\/no-export\/index\.ts:/);
    expect(error.message).toContain('has no default export');
  });

  it('names the file, line and field of a declarative mistake', async () => {
    const error = await failure([dir('bad-yaml')]);
    expect(error).toBeInstanceOf(PlaybookFileError);
    expect(error.message).toContain('test/fixtures/playbooks/bad-yaml/broken.playbook.yaml');
    expect(error.message).toContain('line 24, column 9: steps[0].actions[1]: an action has exactly one of');
  });

  it('refuses a folder that does not exist', async () => {
    expect(await failure(['/nonexistent/belay-playbooks'])).toBeInstanceOf(PlaybookDirectoryError);
  });
});
