// OwnedToolsets: each identified caller has its own saved toolsets, shares those for everyone (no
// owner) and those a policy rule grants, and learns nothing of the others, over the files backend.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { isLoadoutError } from '../shared/index.js';
import { OwnedToolsets } from './ownedToolsets.js';
import { ToolsetStore } from './toolsetStore.js';

const ALICE = { id: 'a'.repeat(32), subject: 'alice' };
const BOB = { id: 'b'.repeat(32), subject: 'bob' };

describe('OwnedToolsets', () => {
  const tempDir = useTempDir('loadout-owned-toolsets-');
  let dir: string;
  let all: ToolsetStore;
  let grantedToBob: Set<string>;
  let alice: OwnedToolsets;
  let bob: OwnedToolsets;
  beforeEach(() => {
    dir = tempDir();
    all = new ToolsetStore(dir);
    grantedToBob = new Set();
    alice = new OwnedToolsets(all, { owner: ALICE, granted: () => false });
    bob = new OwnedToolsets(all, { owner: BOB, granted: (name) => grantedToBob.has(name) });
  });

  it("records its saver as the owner, in the file, and keeps the toolset from every other caller's list, equip and delete", async () => {
    await alice.save({ name: 'secretonly', description: 'Super secret', tools: ['files.read', 'files.write'] });
    expect(await readFile(path.join(dir, 'secretonly.yaml'), 'utf8')).toContain(`owner:\n  id: ${ALICE.id}\n  subject: alice\n`);
    expect((await alice.list()).toolsets.map((t) => t.name)).toEqual(['secretonly']);
    expect((await bob.list()).toolsets).toEqual([]);
    await expect(bob.get('secretonly')).rejects.toSatisfy(
      (error) => isLoadoutError(error, 'TOOLSET_NOT_FOUND') && !/saved toolsets:/.test(error.message),
    );
    expect(await bob.delete('secretonly')).toBe(false);
    await expect(bob.save({ name: 'secretonly', tools: ['files.read'] })).rejects.toSatisfy((error) =>
      isLoadoutError(error, 'TOOLSET_NOT_OWNED'),
    );
    expect((await all.get('secretonly')).owner).toEqual(ALICE);
  });

  it("names only the caller's own toolsets when one is not found", async () => {
    await alice.save({ name: 'secretonly', tools: ['files.read'] });
    await bob.save({ name: 'mine', tools: ['time.now'] });
    await expect(bob.get('nope')).rejects.toThrow("Toolset 'nope' not found; saved toolsets: mine");
  });

  it('shares a toolset with no owner with every caller, and lets none of them change or delete it', async () => {
    await all.save({ name: 'team', tools: ['time.now'] });
    for (const caller of [alice, bob]) {
      expect((await caller.get('team')).tools).toEqual(['time.now']);
      await expect(caller.save({ name: 'team', tools: ['files.read'] })).rejects.toSatisfy((error) =>
        isLoadoutError(error, 'TOOLSET_NOT_OWNED'),
      );
      await expect(caller.delete('team')).rejects.toSatisfy((error) => isLoadoutError(error, 'TOOLSET_NOT_OWNED'));
    }
    expect((await all.get('team')).owner).toBeUndefined();
  });

  it('lists and hands out a toolset a policy rule grants, for use only, and its owner still changes and deletes it', async () => {
    await alice.save({ name: 'review', tools: ['git.diff'] });
    grantedToBob.add('review');
    expect((await bob.list()).toolsets.map((t) => t.name)).toEqual(['review']);
    expect((await bob.get('review')).tools).toEqual(['git.diff']);
    await expect(bob.delete('review')).rejects.toSatisfy((error) => isLoadoutError(error, 'TOOLSET_NOT_OWNED'));
    await alice.save({ name: 'review', tools: ['git.log'] });
    expect(await alice.delete('review')).toBe(true);
  });
});
