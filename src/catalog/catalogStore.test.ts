// CatalogStore.ensureLoaded: the definition cache is read once, on first need, and a cache that
// cannot be read leaves the catalog empty (so discovery rebuilds it) instead of failing. The files
// it keeps beside the catalog (learned words, the servers' summaries) are not read again for
// nothing, yet what another process writes to them still shows.
import { utimesSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewaySettingsSchema, ServerConfigSchema, writeTextAtomic } from '../config/index.js';
import { ServerPool } from '../downstream/index.js';
import { silentLogger, type Logger } from '../shared/index.js';
import { Catalog } from './catalog.js';
import { CatalogStore } from './catalogStore.js';
import { writeDefinitionCache } from './storedDefinitions.js';
import { LearnedWordsStore } from './learnedWords.js';
import { queryKeyOf } from './queryWords.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

describe('CatalogStore.ensureLoaded', () => {
  const tempDir = useTempDir('loadout-catalog-');
  let dir: string;
  let cacheFile: string;
  const configs = { a: ServerConfigSchema.parse({ command: 'node' }), b: ServerConfigSchema.parse({ command: 'node' }) };
  const store = (logger: Logger = silentLogger): CatalogStore =>
    new CatalogStore({ pool: new ServerPool(configs, { logger }), cacheFile, settings: GatewaySettingsSchema.parse({}), logger });

  beforeEach(() => {
    dir = tempDir();
    cacheFile = path.join(dir, 'catalog.json');
  });

  it('reads the cached definitions on the first call only', async () => {
    await writeDefinitionCache(cacheFile, { a: { discoveredAt: 'x', tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } });
    const catalog = store();
    expect(catalog.current.get('a.echo')).toBeUndefined();
    await catalog.ensureLoaded();
    expect(catalog.current.get('a.echo')?.name).toBe('echo');
    expect(catalog.undiscoveredServers).toEqual(['b']);
    // A later write by another process is not read again: ensureLoaded loads once.
    await writeDefinitionCache(cacheFile, { b: { discoveredAt: 'x', tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } });
    await catalog.ensureLoaded();
    expect(catalog.undiscoveredServers).toEqual(['b']);
  });

  it('logs an unreadable cache and treats it as empty, so every server is discovered again', async () => {
    await writeFile(cacheFile, '{ not json');
    const errors: string[] = [];
    const logger: Logger = { ...silentLogger, child: () => logger, error: (_fields, message) => void errors.push(message ?? '') };
    const catalog = store(logger);
    await catalog.ensureLoaded();
    expect(catalog.undiscoveredServers).toEqual(['a', 'b']);
    expect(errors).toEqual(['cached tool definitions unreadable; rediscovering']);
  });
});

describe('CatalogStore beside other processes', () => {
  const tempDir = useTempDir('loadout-catalog-');
  let dir: string;
  const configs = { a: ServerConfigSchema.parse({ command: 'node' }) };
  const store = (files: { learnedWordsFile?: string; serverMapFile?: string }): CatalogStore =>
    new CatalogStore({
      pool: new ServerPool(configs, { logger: silentLogger }),
      cacheFile: path.join(dir, 'catalog.json'),
      settings: GatewaySettingsSchema.parse({}),
      logger: silentLogger,
      ...files,
    });

  beforeEach(() => {
    dir = tempDir();
  });

  it("searches with another process's learned queries once this one has learned too (its write answers, nothing is read back)", async () => {
    const learnedWordsFile = path.join(dir, 'learned-words.json');
    await writeDefinitionCache(path.join(dir, 'catalog.json'), {
      a: {
        discoveredAt: 'x',
        tools: [
          { name: 'write_text', description: 'Jot text down into a file.', inputSchema: { type: 'object' } },
          { name: 'add_memo', description: 'Store a memo.', inputSchema: { type: 'object' } },
          { name: 'fetch_page', description: 'Fetch a web page.', inputSchema: { type: 'object' } },
        ],
      },
    });
    const catalog = store({ learnedWordsFile });
    await catalog.ensureLoaded();
    const top = (query: string) => catalog.current.search({ query, limit: 3, offset: 0 }).tools[0]?.id;
    expect(top('jot this down')).toBe('a.write_text');
    // Another process learns, after this one read the file.
    await new LearnedWordsStore(learnedWordsFile).record(['a.add_memo'], ['jot'], queryKeyOf('jot this down'));
    const session = {};
    catalog.learning!.queried(session, 'get that page', ['a.fetch_page']);
    await catalog.learning!.used(session, ['a.fetch_page']);
    expect(top('jot this down')).toBe('a.add_memo');
    expect(catalog.current.search({ query: 'get that page', limit: 3, offset: 0 }).tools[0]?.id).toBe('a.fetch_page');
  });

  it('answers the map from the summaries file until the catalog is loaded, read again only when it was rewritten', async () => {
    const serverMapFile = path.join(dir, 'server-map.json');
    const summaries = (purpose: string) => `${JSON.stringify({ version: 1, servers: [{ server: 'a', purpose, tools: 2 }] })}\n`;
    const purpose = async (catalog: CatalogStore) => (await catalog.serverMap())[0]?.summary?.purpose;
    await writeTextAtomic(serverMapFile, summaries('notes'));
    const catalog = store({ serverMapFile });
    expect(await purpose(catalog)).toBe('notes');
    // Another process rewrites it (atomically, as loadout writes it): the next map shows it.
    await writeTextAtomic(serverMapFile, summaries('files and folders'));
    expect(await purpose(catalog)).toBe('files and folders');
    // Same inode, size and mtime: the file is taken as unchanged and not read again.
    const mtime = new Date(1_700_000_000_000);
    utimesSync(serverMapFile, mtime, mtime);
    expect(await purpose(catalog)).toBe('files and folders');
    writeFileSync(serverMapFile, summaries('FILES AND FOLDERS'));
    utimesSync(serverMapFile, mtime, mtime);
    expect(await purpose(catalog)).toBe('files and folders');
  });

  it('keeps the summaries file in step once after a burst of catalog changes, not at each one, and by the time it settles', async () => {
    const serverMapFile = path.join(dir, 'server-map.json');
    await writeDefinitionCache(path.join(dir, 'catalog.json'), {
      a: { discoveredAt: 'x', tools: [{ name: 'list_invoices', description: 'List invoices.', inputSchema: { type: 'object' } }] },
    });
    const summarized = vi.spyOn(Catalog.prototype, 'serverSummaries');
    try {
      const catalog = store({ serverMapFile });
      await catalog.ensureLoaded();
      // A warm start's first answer does not wait for every server's purpose.
      expect(summarized).not.toHaveBeenCalled();
      for (const description of ['one', 'two', 'three']) catalog.setDescriptionOverrides(new Map([['a.list_invoices', description]]));
      await catalog.settled();
      expect(summarized).toHaveBeenCalledTimes(1);
      expect(JSON.parse(await readFile(serverMapFile, 'utf8'))).toEqual({
        version: 1,
        servers: [{ server: 'a', purpose: 'invoices', tools: 1 }],
      });
    } finally {
      summarized.mockRestore();
    }
  });
});
