// Store mode keeps a discovery's listing and its changed-tool approvals in the server's catalog
// record by one write (they used to be two), on every store backend; a write that fails fails the
// discovery as a failed catalog.json write does in files mode, and the next flush keeps both.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewaySettingsSchema, ServerConfigSchema } from '../config/index.js';
import { ServerPool } from '../downstream/index.js';
import { silentLogger } from '../shared/index.js';
import type { CatalogEntryRecord, RecordCollection } from '../store/index.js';
import { STORE_BACKENDS, useBackendStore, type StoreBackend } from '../../test/helpers/storeBackends.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { CatalogStore } from './index.js';
import { toolHash } from './toolHash.js';

type Definitions = Awaited<ReturnType<ServerPool['listDefinitions']>>;

const ECHO = { name: 'echo', description: 'Echo text.', inputSchema: { type: 'object' as const } };

/** A pool whose one server, `srv`, lists the echo tool at once. */
class ListingPool extends ServerPool {
  constructor() {
    super({ srv: ServerConfigSchema.parse({ command: 'node' }) }, { logger: silentLogger });
  }
  override listDefinitions(): Promise<Definitions> {
    return Promise.resolve({ tools: [ECHO] });
  }
  override stopIfIdle(): Promise<void> {
    return Promise.resolve();
  }
}

describe.each(STORE_BACKENDS)('discovery approvals in store mode ($name)', (backend: StoreBackend) => {
  const store = useBackendStore(backend);

  // The store's catalog records, each write (update, updateAll) recorded by key, failing while `failing` says so.
  function countedRecords(): { records: RecordCollection<CatalogEntryRecord>; writes: string[]; failing: { now: boolean } } {
    const writes: string[] = [];
    const failing = { now: false };
    const kept = store().catalog;
    const records: RecordCollection<CatalogEntryRecord> = {
      get: (key) => kept.get(key),
      list: () => kept.list(),
      listEach: () => kept.listEach(),
      put: (key, value, options) => kept.put(key, value, options),
      putAll: (all) => kept.putAll(all),
      update: (key, change) => {
        writes.push(key);
        return failing.now ? Promise.reject(new Error('the store is away')) : kept.update(key, change);
      },
      updateAll: (changes) => {
        writes.push(...changes.keys());
        return failing.now ? Promise.reject(new Error('the store is away')) : kept.updateAll(changes);
      },
      delete: (key) => kept.delete(key),
    };
    return { records, writes, failing };
  }

  const catalogOf = (records: RecordCollection<CatalogEntryRecord>): CatalogStore =>
    new CatalogStore({ pool: new ListingPool(), catalogRecords: records, settings: GatewaySettingsSchema.parse({}), logger: silentLogger });

  it("keeps a server's listing and its first approval in one write", async () => {
    const { records, writes } = countedRecords();
    const catalog = catalogOf(records);
    const [result] = await catalog.discover(['srv']);
    expect(result).toMatchObject({ ok: true, merge: { added: ['echo'] } });
    expect(writes).toEqual(['srv']);
    expect((await store().catalog.get('srv'))?.value).toMatchObject({ tools: [ECHO], approved: { echo: toolHash(ECHO) } });
    expect(catalog.current.get('srv.echo')?.name).toBe('echo');
  });

  it('fails a discovery whose write fails, and keeps the listing and approval with the next one', async () => {
    const { records, writes, failing } = countedRecords();
    const catalog = catalogOf(records);
    failing.now = true;
    await expect(catalog.discover(['srv'])).rejects.toThrow('the store is away');
    expect(await store().catalog.get('srv')).toBeUndefined();
    failing.now = false;
    await catalog.discover(['srv']);
    expect(writes).toEqual(['srv', 'srv']);
    expect((await store().catalog.get('srv'))?.value).toMatchObject({ tools: [ECHO], approved: { echo: toolHash(ECHO) } });
  });
});

describe('discovery in files mode', () => {
  const tempDir = useTempDir('loadout-approvals-');

  it('fails a discovery whose catalog.json write fails, as store mode does', async () => {
    const dir = tempDir();
    // A file where catalog.json's directory should be: the write fails.
    await writeFile(path.join(dir, 'data'), 'not a directory');
    const cacheFile = path.join(dir, 'data', 'catalog.json');
    const catalog = new CatalogStore({
      pool: new ListingPool(),
      cacheFile,
      serversFile: path.join(dir, 'servers.yaml'),
      settings: GatewaySettingsSchema.parse({}),
      logger: silentLogger,
    });
    await expect(catalog.discover(['srv'])).rejects.toThrow(/EEXIST|ENOTDIR/);
    await expect(readFile(path.join(dir, 'servers.yaml'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
