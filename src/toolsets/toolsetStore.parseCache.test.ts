// ToolsetStore keeps the last parse of each file: a file changed behind its back (another loadout
// process, a hand edit, git) must still be seen on the next read, and shared results stay intact.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolsetStore } from './index.js';

describe('ToolsetStore parse cache', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'loadout-toolsets-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
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
