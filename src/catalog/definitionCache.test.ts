import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { readDefinitionCache, writeDefinitionCache } from './definitionCache.js';
import { toolHash } from './toolHash.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

describe('definition cache', () => {
  const tempDir = useTempDir('loadout-defcache-');
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = tempDir();
    file = path.join(dir, 'catalog.json');
  });

  it('reads back what was written, definitions untouched', async () => {
    const tool = {
      name: 'read',
      description: 'Read a file',
      inputSchema: { type: 'object' as const, properties: { path: { type: 'string' } } },
      extra: { kept: true },
    };
    await writeDefinitionCache(file, { files: { discoveredAt: '2026-01-01T00:00:00.000Z', tools: [tool] } });
    const cache = await readDefinitionCache(file);
    expect(cache).toEqual({ files: { discoveredAt: '2026-01-01T00:00:00.000Z', tools: [tool] } });
    expect(toolHash(cache.files!.tools[0]!)).toBe(toolHash(tool));
  });

  it.each([
    ['a tool without a name', { files: { discoveredAt: 'x', tools: [{ name: 'ok' }, { description: 'nameless' }] } }],
    ['tools that are not a list', { files: { discoveredAt: 'x', tools: { name: 'read' } } }],
    ['a hash that is not a string', { files: { discoveredAt: 'x', tools: [{ name: 'read' }], hashes: { read: 7 } } }],
  ])('reports a cache with %s as invalid', async (_case, servers) => {
    await writeFile(file, JSON.stringify({ version: 1, servers }));
    await expect(readDefinitionCache(file)).rejects.toMatchObject({
      code: 'STATE_INVALID',
      message: expect.stringContaining('not a valid tool cache'),
    });
  });
});
