import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ServersFileSchema } from './schema.js';
import { PARSED_SCHEMA_VERSION, loadServersConfig } from './serversFileCache.js';

describe('loadServersConfig', () => {
  let dir: string;
  let file: string;
  let cacheFile: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'loadout-parsed-'));
    file = path.join(dir, 'servers.yaml');
    cacheFile = path.join(dir, 'servers.parsed.json');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reuses the parsed config while the text is unchanged and re-parses after an edit', async () => {
    await writeFile(file, 'servers:\n  a: { command: x }\n');
    expect(Object.keys((await loadServersConfig(file, cacheFile)).config.servers)).toEqual(['a']);
    // Prove the second load comes from the cache: doctor the cached copy.
    const cached = JSON.parse(await readFile(cacheFile, 'utf8')) as { config: { servers: Record<string, unknown> } };
    cached.config.servers = { fromCache: { command: 'y' } };
    await writeFile(cacheFile, JSON.stringify(cached));
    expect(Object.keys((await loadServersConfig(file, cacheFile)).config.servers)).toEqual(['fromCache']);
    await writeFile(file, 'servers:\n  b: { command: x }\n');
    expect(Object.keys((await loadServersConfig(file, cacheFile)).config.servers)).toEqual(['b']);
  });

  it('still reports an invalid servers.yaml with its line and column', async () => {
    await writeFile(file, 'servers:\n  a: { command: x }\n');
    await loadServersConfig(file, cacheFile);
    await writeFile(file, 'servers:\n  a: { command: [x }\n');
    await expect(loadServersConfig(file, cacheFile)).rejects.toThrow(/servers\.yaml:2:\d+: /);
  });

  it('keys the parsed copy by a schema version that changes with ServersFileSchema', () => {
    // The parsed copy is used without validating it again. If this fails, ServersFileSchema has
    // changed: bump PARSED_SCHEMA_VERSION (so copies made under the old schema are re-parsed) and
    // record the new version and hash here.
    const schema = JSON.stringify(z.toJSONSchema(ServersFileSchema, { io: 'input', unrepresentable: 'any' }));
    expect({ version: PARSED_SCHEMA_VERSION, schemaHash: createHash('sha256').update(schema).digest('hex').slice(0, 16) }).toEqual({ version: 4, schemaHash: '9970e0ce726cde76' });
  });

  it('ignores a corrupt cache', async () => {
    await writeFile(file, 'servers:\n  a: { command: x }\n');
    await writeFile(cacheFile, '{ nope');
    expect(Object.keys((await loadServersConfig(file, cacheFile)).config.servers)).toEqual(['a']);
  });
});
