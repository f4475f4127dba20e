// The team store's records of equipped sets, on a replica that has not heard a change made through
// another: a request that asks the record (check) sees it, one served as heard does not yet.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../shared/index.js';
import type { TeamStore } from '../store/index.js';
import { usePostgresReplicas } from '../../test/helpers/storeBackends.js';
import { StoreRecordPlace } from './toolsetRecords.js';

// `store` as a replica that has not heard any change yet (its notices not arrived): onChange hears nothing.
function unhearing(store: TeamStore): TeamStore {
  return new Proxy(store, { get: (target, key) => (key === 'onChange' ? () => () => undefined : (Reflect.get(target, key) as unknown)) });
}

describe('StoreRecordPlace', () => {
  const open = usePostgresReplicas();
  const options = { initial: () => Promise.resolve(null), logger: silentLogger };
  const alice = { id: 'alice', issuer: 'token', subject: 'alice', groups: [] };

  it("learns a principal's equip made through another replica when asked, before its notice arrives", async () => {
    const [writer, reader] = [await open(), await open()];
    const place = new StoreRecordPlace(unhearing(reader), options);
    const record = place.principal(alice);
    const before = record.version();
    await writer.equipped.put('alice', { toolset: 'dev' });
    expect(record.version()).toBe(before);
    await record.check();
    expect(record.version()).not.toBe(before);
    expect(await record.read(false)).toBe('dev');
    // Asked again with nothing changed, the version stays: the set is not read again.
    const checked = record.version();
    await record.check();
    expect(record.version()).toBe(checked);
    place.close();
  });

  it("learns a toolset endpoint's toolset saved again through another replica", async () => {
    const [writer, reader] = [await open(), await open()];
    await writer.toolsets.put('dev', { name: 'dev', tools: ['echo.echo'] });
    const record = new StoreRecordPlace(unhearing(reader), options).toolset('dev');
    const before = record.version();
    await writer.toolsets.put('dev', { name: 'dev', tools: ['echo.echo', 'echo.add'] });
    await record.check();
    expect(record.version()).not.toBe(before);
  });

  it('keeps the version heard when the store cannot be read, and serves the set as it was', async () => {
    const reader = await open();
    const record = new StoreRecordPlace(unhearing(reader), options).principal(alice);
    const before = record.version();
    await reader.close();
    await expect(record.check()).resolves.toBeUndefined();
    expect(record.version()).toBe(before);
  });

  it("fails a principal's first read the store cannot answer, naming the store: never a set with nothing equipped", async () => {
    const reader = await open();
    const record = new StoreRecordPlace(unhearing(reader), options).principal(alice);
    await reader.close();
    await expect(record.read(true)).rejects.toThrow(`store ${reader.description} is closed`);
    // A set read before is served as it was (undefined: left as it is).
    await expect(record.read(false)).resolves.toBeUndefined();
  });
});
