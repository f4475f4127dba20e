// CatalogStore.ensureLoaded: the definition cache is read once, on first need, and a cache that
// cannot be read leaves the catalog empty (so discovery rebuilds it) instead of failing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewaySettingsSchema, ServerConfigSchema } from '../config/index.js';
import { ServerPool } from '../downstream/index.js';
import { silentLogger, type Logger } from '../shared/index.js';
import { CatalogStore } from './catalogStore.js';
import { writeDefinitionCache } from './definitionCache.js';

describe('CatalogStore.ensureLoaded', () => {
  let dir: string;
  let cacheFile: string;
  const configs = { a: ServerConfigSchema.parse({ command: 'node' }), b: ServerConfigSchema.parse({ command: 'node' }) };
  const store = (logger: Logger = silentLogger): CatalogStore =>
    new CatalogStore({ pool: new ServerPool(configs, { logger }), cacheFile, settings: GatewaySettingsSchema.parse({}), logger });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'loadout-catalog-'));
    cacheFile = path.join(dir, 'catalog.json');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
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
