import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ServersFileSchema } from './schema.js';
import { loadServersConfig, serversFileSchemaHash } from './serversFileCache.js';
import { useTempDir } from '../../test/helpers/tempDir.js';

describe('loadServersConfig', () => {
  const dir = useTempDir('loadout-parsed-');
  let file: string;
  let cacheFile: string;
  beforeEach(() => {
    file = path.join(dir(), 'servers.yaml');
    cacheFile = path.join(dir(), 'servers.parsed.json');
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

  it('with lastGoodOnError, answers a file that does not parse with its last good parse and the problem', async () => {
    await writeFile(file, 'servers:\n  a: { command: x }\n');
    await loadServersConfig(file, cacheFile);
    await writeFile(file, 'servers:\n  a: { command: [x }\n');
    const loaded = await loadServersConfig(file, cacheFile, { lastGoodOnError: true });
    expect(Object.keys(loaded.config.servers)).toEqual(['a']);
    expect(loaded.fileProblem).toEqual({ problem: expect.stringMatching(/servers\.yaml:2:\d+: /) as string, servingLastGood: true });
    // The failed parse leaves the last good one in place.
    expect((await loadServersConfig(file, cacheFile, { lastGoodOnError: true })).fileProblem?.servingLastGood).toBe(true);
  });

  it('with lastGoodOnError and no good parse yet, answers no servers and the problem', async () => {
    await writeFile(file, 'servers:\n  a: { command: [x }\n');
    const loaded = await loadServersConfig(file, cacheFile, { lastGoodOnError: true });
    expect(loaded.config.servers).toEqual({});
    expect(loaded.fileProblem).toMatchObject({ servingLastGood: false });
  });

  it('keys the parsed copy by a hash of the schema, which changes with any field of it', async () => {
    await writeFile(file, 'servers:\n  a: { command: x }\n');
    await loadServersConfig(file, cacheFile);
    // A copy written under another schema has another key, so it is re-parsed, not trusted.
    const cached = JSON.parse(await readFile(cacheFile, 'utf8')) as { textHash: string; config: { servers: Record<string, unknown> } };
    const otherSchemaKey = createHash('sha256').update(`other-schema\0${file}\0`).update('servers:\n  a: { command: x }\n').digest('hex');
    await writeFile(cacheFile, JSON.stringify({ textHash: otherSchemaKey, config: { ...cached.config, servers: { fromOldSchema: {} } } }));
    expect(Object.keys((await loadServersConfig(file, cacheFile)).config.servers)).toEqual(['a']);
    const widened = ServersFileSchema.extend({ extra: z.string().optional() });
    expect(serversFileSchemaHash()).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(z.toJSONSchema(widened, { io: 'input', unrepresentable: 'any' }))).not.toEqual(
      JSON.stringify(z.toJSONSchema(ServersFileSchema, { io: 'input', unrepresentable: 'any' })),
    );
  });

  it('ignores a corrupt cache', async () => {
    await writeFile(file, 'servers:\n  a: { command: x }\n');
    await writeFile(cacheFile, '{ nope');
    expect(Object.keys((await loadServersConfig(file, cacheFile)).config.servers)).toEqual(['a']);
  });
});
