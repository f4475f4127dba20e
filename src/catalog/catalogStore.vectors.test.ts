// Word vectors that cannot be loaded are told once by each CatalogStore, not once per process: a
// second gateway (or command) in the same process says it too, with its own logger.
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GatewaySettingsSchema, ServerConfigSchema } from '../config/index.js';
import { ServerPool } from '../downstream/index.js';
import { LoadoutError, silentLogger, type Logger } from '../shared/index.js';
import { CatalogStore } from './catalogStore.js';
import { writeDefinitionCache } from './storedDefinitions.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

vi.mock('./wordVectors.js', async (original) => ({
  ...(await original<typeof import('./wordVectors.js')>()),
  loadWordVectors: () => ({ ok: false, error: new LoadoutError('SEARCH_VECTORS_INVALID', 'the vector file is corrupt') }),
}));

describe('CatalogStore without word vectors', () => {
  const tempDir = useTempDir('loadout-catalog-');

  it('says so once per store, two stores in one process each once', async () => {
    const cacheFile = path.join(tempDir(), 'catalog.json');
    await writeDefinitionCache(cacheFile, { a: { discoveredAt: 'x', tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } });
    const configs = { a: ServerConfigSchema.parse({ command: 'node' }) };
    const told: string[][] = [[], []];
    for (const heard of told) {
      const logger: Logger = { ...silentLogger, child: () => logger, error: (_fields, message) => void heard.push(message ?? '') };
      const store = new CatalogStore({
        pool: new ServerPool(configs, { logger }),
        cacheFile,
        settings: GatewaySettingsSchema.parse({}),
        logger,
      });
      await store.ensureLoaded();
      // Two ranked searches: the second of the same store says nothing more.
      for (const query of ['echo', 'echo again']) store.current.rank({ query, limit: 1, offset: 0 });
    }
    expect(told).toEqual([
      ['search ranks by word matches only: the word vectors could not be loaded'],
      ['search ranks by word matches only: the word vectors could not be loaded'],
    ]);
  });
});
