// ToolsetStore keeps the last parse of each file: a file changed behind its back (another loadout
// process, a hand edit, git) must still be seen on the next read, and shared results stay intact.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ToolsetStore } from './index.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

describe('ToolsetStore parse cache', () => {
  const tempDir = useTempDir('loadout-toolsets-');
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });

  it('returns what was saved, then sees a hand edit made after the save', async () => {
    const store = new ToolsetStore(dir);
    await store.save({ name: 'dev', tools: ['git.status', 'git.diff'] });
    expect((await store.get('dev')).tools).toEqual(['git.status', 'git.diff']);
    await writeFile(path.join(dir, 'dev.yaml'), 'name: dev\ntools:\n  - git.log\n');
    expect((await store.get('dev')).tools).toEqual(['git.log']);
  });

  it('reports a file broken after a successful read instead of serving the old parse', async () => {
    const store = new ToolsetStore(dir);
    await store.save({ name: 'dev', tools: ['git.status'] });
    await store.get('dev');
    await writeFile(path.join(dir, 'dev.yaml'), 'name: dev\ntools: [unclosed\n');
    await expect(store.get('dev')).rejects.toThrow(/dev\.yaml/);
  });

  it('hands out toolsets that callers cannot change for each other', async () => {
    const store = new ToolsetStore(dir);
    await store.save({ name: 'dev', tools: ['git.status'] });
    const first = await store.get('dev');
    expect(() => first.tools.push('git.push')).toThrow();
    expect((await store.get('dev')).tools).toEqual(['git.status']);
  });

  it('forgets a deleted toolset', async () => {
    const store = new ToolsetStore(dir);
    await store.save({ name: 'dev', tools: ['git.status'] });
    await store.get('dev');
    await store.delete('dev');
    await expect(store.get('dev')).rejects.toThrow(/not found/);
  });
});
