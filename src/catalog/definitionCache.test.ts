import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { readDefinitionCache, writeDefinitionCache } from './storedDefinitions.js';
import { catalogFileText } from '../config/index.js';
import { toolHash } from './toolHash.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

describe('definition cache', () => {
  const tempDir = useTempDir('loadout-defcache-');
  let file: string;
  beforeEach(() => {
    file = path.join(tempDir(), 'catalog.json');
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

  it('writes the file in ASCII (other characters escaped), so that reading it never makes a two-byte string, and reads the text back as it was', async () => {
    const description = 'Café ☕ 日本語 — 🚀 launch, Ünïcode';
    const tool = { name: 'launch', description, inputSchema: { type: 'object' as const, properties: { ñame: { description: '✓ ok' } } } };
    await writeDefinitionCache(file, { space: { discoveredAt: 'x', tools: [tool] } });
    expect(await readFile(file, 'utf8')).toMatch(/^[\x00-\x7f]*$/);
    expect((await readDefinitionCache(file)).space?.tools).toEqual([tool]);
  });

  it('writes catalog.json as its one writer does, servers kept in their order with their tool hashes, and rebuilds a corrupt one', async () => {
    const tool = (name: string) => ({ name, description: `Do ${name} — now`, inputSchema: { type: 'object' as const } });
    await writeFile(file, '{ not json');
    await writeDefinitionCache(file, { b: { discoveredAt: '1', tools: [tool('x')] }, a: { discoveredAt: '1', tools: [tool('y')] } });
    await writeDefinitionCache(file, { c: { discoveredAt: '2', tools: [tool('z')] }, b: { discoveredAt: '2', tools: [tool('x')] } });
    const kept = (discoveredAt: string, name: string) => ({ discoveredAt, tools: [tool(name)], hashes: { [name]: toolHash(tool(name)) } });
    expect(await readFile(file, 'utf8')).toBe(catalogFileText({ b: kept('2', 'x'), a: kept('1', 'y'), c: kept('2', 'z') }));
  });

  it('reads a list failure cached as words alone (before its code was kept) as a failure without a code', async () => {
    const listFailures = { resourceTemplates: 'resources/templates/list failed: Method not found (-32601)' };
    await writeFile(file, JSON.stringify({ version: 1, servers: { db: { discoveredAt: 'x', tools: [{ name: 'query' }], listFailures } } }));
    expect((await readDefinitionCache(file)).db?.listFailures).toEqual({ resourceTemplates: { text: listFailures.resourceTemplates } });
  });

  it('keeps a list failure with its JSON-RPC code', async () => {
    const listFailures = { prompts: { text: 'prompts/list failed: Method not found (-32601)', rpcCode: -32601 } };
    await writeDefinitionCache(file, {
      db: { discoveredAt: 'x', tools: [{ name: 'query', inputSchema: { type: 'object' } }], listFailures },
    });
    expect((await readDefinitionCache(file)).db?.listFailures).toEqual(listFailures);
  });

  it.each([
    ['a tool without a name', { files: { discoveredAt: 'x', tools: [{ name: 'ok' }, { description: 'nameless' }] } }],
    ['tools that are not a list', { files: { discoveredAt: 'x', tools: { name: 'read' } } }],
    [
      'a list failure without words',
      { files: { discoveredAt: 'x', tools: [{ name: 'read' }], listFailures: { prompts: { rpcCode: 1 } } } },
    ],
    ['a hash that is not a string', { files: { discoveredAt: 'x', tools: [{ name: 'read' }], hashes: { read: 7 } } }],
  ])('reports a cache with %s as invalid', async (_case, servers) => {
    await writeFile(file, JSON.stringify({ version: 1, servers }));
    await expect(readDefinitionCache(file)).rejects.toMatchObject({
      code: 'STATE_INVALID',
      message: expect.stringContaining('not a valid tool cache'),
    });
  });
});
