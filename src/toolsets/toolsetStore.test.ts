// ToolsetStore: one YAML file per toolset, with names that cannot leave the folder.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { isLoadoutError } from '../shared/index.js';
import { ToolsetStore } from './toolsetStore.js';

describe('ToolsetStore', () => {
  const tempDir = useTempDir('loadout-toolsets-');
  let root: string;
  let dir: string;
  let store: ToolsetStore;
  beforeEach(() => {
    root = tempDir();
    dir = path.join(root, 'toolsets');
    store = new ToolsetStore(dir);
  });

  it('saves a toolset as <name>.yaml and reads it back', async () => {
    await store.save({ name: 'dev', description: 'Everyday tools', tools: ['git.status', 'docs.search'] });
    expect(await readFile(path.join(dir, 'dev.yaml'), 'utf8')).toBe(
      'name: dev\ndescription: Everyday tools\ntools:\n  - git.status\n  - docs.search\n',
    );
    expect(await store.get('dev')).toEqual({ name: 'dev', description: 'Everyday tools', tools: ['git.status', 'docs.search'] });
  });

  it.each(['../x', '../../etc/passwd', 'a/b', '.hidden', 'Upper', '', 'x'.repeat(65), 'a b'])(
    'refuses the name %j and writes nothing outside its folder',
    async (name) => {
      const refused = await store.save({ name, tools: ['a.b'] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(Error);
      await expect(store.get(name)).rejects.toSatisfy((error) => isLoadoutError(error, 'TOOLSET_INVALID'));
      await expect(store.delete(name)).rejects.toSatisfy((error) => isLoadoutError(error, 'TOOLSET_INVALID'));
      expect(await readdir(root)).toEqual([]);
    },
  );

  it('refuses to save the reserved name all', async () => {
    await expect(store.save({ name: 'all', tools: ['a.b'] })).rejects.toSatisfy((error) => isLoadoutError(error, 'TOOLSET_INVALID'));
  });

  it('reports an unknown toolset with the saved ones', async () => {
    await store.save({ name: 'dev', tools: ['a.b'] });
    await expect(store.get('web')).rejects.toThrow("Toolset 'web' not found; saved toolsets: dev");
  });

  it('rejects a file whose name differs from its file name, and lists it as a problem', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'dev.yaml'), 'name: other\ntools: [a.b]\n');
    await expect(store.get('dev')).rejects.toThrow("name 'other' does not match the file name 'dev.yaml'");
    const { toolsets, problems } = await store.list();
    expect(toolsets).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.file).toBe(path.join(dir, 'dev.yaml'));
  });

  it('rejects malformed YAML with the file name, and still lists the good files', async () => {
    await store.save({ name: 'good', tools: ['a.b'] });
    await writeFile(path.join(dir, 'bad.yaml'), 'name: bad\ntools: [a.b\n');
    await expect(store.get('bad')).rejects.toSatisfy(
      (error) => isLoadoutError(error, 'TOOLSET_INVALID') && error.message.includes('bad.yaml'),
    );
    const { toolsets, problems } = await store.list();
    expect(toolsets.map((t) => t.name)).toEqual(['good']);
    expect(problems.map((p) => path.basename(p.file))).toEqual(['bad.yaml']);
  });

  it('rejects unknown keys and tools not written server.tool', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'typo.yaml'), 'name: typo\ntool: [a.b]\n');
    await writeFile(path.join(dir, 'flat.yaml'), 'name: flat\ntools: [a_b]\n');
    await expect(store.get('typo')).rejects.toSatisfy((error) => isLoadoutError(error, 'TOOLSET_INVALID'));
    await expect(store.get('flat')).rejects.toThrow('tools are written "server.tool"');
  });

  it('deletes a toolset and says whether there was one', async () => {
    await store.save({ name: 'dev', tools: ['a.b'] });
    expect(await store.delete('dev')).toBe(true);
    expect(await store.delete('dev')).toBe(false);
    expect((await store.list()).toolsets).toEqual([]);
  });

  it('lists nothing when the folder does not exist yet', async () => {
    expect(await store.list()).toEqual({ toolsets: [], problems: [] });
  });
});
