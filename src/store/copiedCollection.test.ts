// The local copy a replica serves from while the store is away: kept on every answer, read only
// while the store cannot answer, never winning over the store, and silent on nothing it does not know.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { EquippedRecordSchema, type EquippedRecord } from '../config/index.js';
import { silentLogger } from '../shared/index.js';
import { CopiedCollection } from './copiedCollection.js';
import { LocalCopy } from './localCopy.js';
import { MemoryCollection } from './memoryCollection.js';
import type { RecordCollection } from './store.js';
import { isStoreAway, storeFault } from './storeFaults.js';
import { parseStoreUrl } from './storeUrl.js';

const URL = parseStoreUrl('postgres://me:pw@127.0.0.1:5432/loadout');

// A store's equipped records that can be made to fail as a stopped Postgres does.
function switchableStore(): { records: RecordCollection<EquippedRecord>; setAway(away: boolean): void } {
  let revision = 0;
  let away = false;
  const inner = new MemoryCollection(
    'equipped',
    EquippedRecordSchema,
    () => Promise.resolve(++revision),
    () => undefined,
  );
  const refused = () => {
    if (away) throw storeFault(URL, 'read equipped', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
  };
  const records: RecordCollection<EquippedRecord> = {
    get: async (key) => (refused(), inner.get(key)),
    list: async () => (refused(), inner.list()),
    listEach: async () => (refused(), inner.listEach()),
    put: async (key, value, options) => (refused(), inner.put(key, value, options)),
    putAll: async (all) => (refused(), inner.putAll(all)),
    update: async (key, change) => (refused(), inner.update(key, change)),
    updateAll: async (changes) => (refused(), inner.updateAll(changes)),
    delete: async (key) => (refused(), inner.delete(key)),
  };
  return { records, setAway: (value) => (away = value) };
}

describe('CopiedCollection', () => {
  const tempDir = useTempDir('loadout-copy-');
  const open = (store: RecordCollection<EquippedRecord>) =>
    new CopiedCollection('equipped', store, new LocalCopy(path.join(tempDir(), 'copy'), silentLogger), silentLogger);

  it('answers from the copy kept before a restart while the store is away, in files of mode 0600', async () => {
    const store = switchableStore();
    const before = open(store.records);
    await before.put('alice', { toolset: 'talk' });
    expect(await before.get('bob')).toBeUndefined();
    store.setAway(true);
    // A new process on the same data dir.
    const after = open(store.records);
    expect((await after.get('alice'))?.value).toEqual({ toolset: 'talk' });
    // Bob had no record: the copy knows that too, and says so rather than failing.
    expect(await after.get('bob')).toBeUndefined();
    const dir = path.join(tempDir(), 'copy', 'equipped');
    for (const name of await readdir(dir)) expect(((await stat(path.join(dir, name))).mode & 0o777).toString(8)).toBe('600');
  });

  it("throws the store's own fault for a record the copy does not know, and refuses writes", async () => {
    const store = switchableStore();
    store.setAway(true);
    const copied = open(store.records);
    const failure = await copied.get('carol').catch((error: unknown) => error);
    expect(isStoreAway(failure)).toBe(true);
    await expect(copied.put('carol', { toolset: 'x' })).rejects.toThrow(`store ${URL.masked}: cannot`);
    // No whole listing was kept: a list is the store's fault too, not an empty answer.
    expect(isStoreAway(await copied.list().catch((error: unknown) => error))).toBe(true);
  });

  it("never lets a copy older than the store's revision win: the store's answer replaces it, an older one does not", async () => {
    const store = switchableStore();
    const copied = open(store.records);
    await copied.put('alice', { toolset: 'talk' });
    // Another replica equips meanwhile (written to the store, not through this copy).
    await store.records.put('alice', { toolset: 'pair' });
    expect((await copied.get('alice'))?.value).toEqual({ toolset: 'pair' });
    const copy = new LocalCopy(path.join(tempDir(), 'copy'), silentLogger);
    const newest = (await store.records.get('alice'))!;
    // An answer that comes back late, older than the one kept.
    await copy.keep('equipped', 'alice', { key: 'alice', value: { toolset: 'talk' }, revision: newest.revision - 1 });
    store.setAway(true);
    expect((await open(store.records).get('alice'))?.value).toEqual({ toolset: 'pair' });
  });

  it('lists from the copy only a listing it kept whole, without the records deleted since', async () => {
    const store = switchableStore();
    const copied = open(store.records);
    await copied.put('alice', { toolset: 'talk' });
    await copied.put('bob', { toolset: 'pair' });
    await store.records.delete('bob');
    expect((await copied.list()).map((record) => record.key)).toEqual(['alice']);
    store.setAway(true);
    expect((await open(store.records).list()).map((record) => record.key)).toEqual(['alice']);
  });
});
