// OwnedToolsets: each identified caller has its own saved toolsets, shares those for everyone (no
// owner) and those a policy rule grants, and learns nothing of the others, on both store backends
// (the toolset files of files mode, the team store's rows).
import { beforeEach, describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useBackendStore, type StoreBackend } from '../../test/helpers/storeBackends.js';
import { isLoadoutError } from '../shared/index.js';
import { OwnedToolsets } from './ownedToolsets.js';
import { StoredToolsets } from './storedToolsets.js';

const ALICE = { id: 'a'.repeat(32), subject: 'alice' };
const BOB = { id: 'b'.repeat(32), subject: 'bob' };

describe.each(STORE_BACKENDS)('OwnedToolsets ($name)', (backend: StoreBackend) => {
  const store = useBackendStore(backend);
  let all: StoredToolsets;
  let grantedToBob: Set<string>;
  let alice: OwnedToolsets;
  let bob: OwnedToolsets;
  beforeEach(() => {
    all = new StoredToolsets(store().toolsets);
    grantedToBob = new Set();
    alice = new OwnedToolsets(all, { owner: ALICE, granted: () => false });
    bob = new OwnedToolsets(all, { owner: BOB, granted: (name) => grantedToBob.has(name) });
  });

  it("records its saver as the owner, and keeps the toolset from every other caller's list, equip and delete", async () => {
    await alice.save({ name: 'secretonly', description: 'Super secret', tools: ['files.read', 'files.write'] });
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

  it('gives a new name to one of two callers saving it at once, and refuses the other having written nothing', async () => {
    const saves = await Promise.allSettled([
      alice.save({ name: 'shared-name', tools: ['files.read'] }),
      bob.save({ name: 'shared-name', tools: ['time.now'] }),
    ]);
    const refused = saves.filter((save) => save.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(isLoadoutError((refused[0] as PromiseRejectedResult).reason, 'TOOLSET_NOT_OWNED')).toBe(true);
    const kept = await all.get('shared-name');
    expect(kept.owner).toEqual(saves[0].status === 'fulfilled' ? ALICE : BOB);
    expect(kept.tools).toEqual(kept.owner?.id === ALICE.id ? ['files.read'] : ['time.now']);
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
