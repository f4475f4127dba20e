import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useBackendStore, type StoreBackend } from '../../test/helpers/storeBackends.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { ServerConfigSchema, type DiscoveryRecord, type ServerConfig } from '../config/index.js';
import { openDataDirStore, type RecordCollection } from '../store/index.js';
import { readDiscoveryRecord, readDiscoveryRecords, recordAuthorized, recordDiscoveryOutcomes } from './discoveryRecords.js';
import { storedDiscoveryRecords } from './storedDiscoveryRecords.js';

const tempDir = useTempDir('loadout-discovery-records-');
// The records of the data dir holding `file` (its discovery.json), as files mode keeps them.
const recordsIn = async (file: string) =>
  storedDiscoveryRecords((await openDataDirStore({ dataDir: path.dirname(file), toolsetsDir: path.dirname(file) })).discovery);

const configs: Record<string, ServerConfig> = {
  remote: ServerConfigSchema.parse({ url: 'http://127.0.0.1:9/mcp' }),
  broken: ServerConfigSchema.parse({ command: 'node', args: ['broken.js'] }),
  silent: ServerConfigSchema.parse({ command: 'node', args: ['silent.js'] }),
  other: ServerConfigSchema.parse({ command: 'node', args: ['other.js'] }),
};

// Texts as loadout worded these failures when discovery.json kept only text (version 1).
const V1_TEXTS = {
  remote: "Server 'remote' needs authorization: run loadout auth remote",
  broken: "Server 'broken' started, but its tools/list failed (boom); its tools stay unknown until it lists them",
  silent: "Server 'silent' failed to start: it did not answer the MCP handshake (initialize) within 30 s",
};

describe('discovery records', () => {
  it('keeps each failure as its code and its text, and tells kinds by the code alone', async () => {
    const file = path.join(tempDir(), 'discovery.json');
    // A text that reads like a login failure but is not one: the code decides.
    const failure = {
      code: 'SERVER_START_FAILED' as const,
      text: "Server 'other' needs authorization: run loadout auth other (said its stderr)",
    };
    await recordDiscoveryOutcomes(await recordsIn(file), configs, [{ server: 'other', ok: false, failure }]);

    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ version: 2, servers: { other: { failure } } });
    expect((await readDiscoveryRecords(await recordsIn(file), configs)).get('other')?.failure).toEqual(failure);
  });

  it('writes nothing for a success of a server it has no record of, and forgets a recorded one on its success', async () => {
    const file = path.join(tempDir(), 'discovery.json');
    await recordDiscoveryOutcomes(await recordsIn(file), configs, [{ server: 'other', ok: true }]);
    await expect(readFile(file, 'utf8')).rejects.toThrow(/ENOENT/);
    const failure = { code: 'SERVER_START_FAILED' as const, text: 'other exited' };
    await recordDiscoveryOutcomes(await recordsIn(file), configs, [{ server: 'other', ok: false, failure }]);
    await recordDiscoveryOutcomes(await recordsIn(file), configs, [
      { server: 'silent', ok: true },
      { server: 'other', ok: true },
    ]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 2, servers: {} });
  });

  it('forgets a failure for want of a login recorded before a connection with the tokens, and only that one', async () => {
    const file = path.join(tempDir(), 'discovery.json');
    const needsLogin = { code: 'NEEDS_AUTHORIZATION' as const, text: V1_TEXTS.remote };
    const failedAt = Date.parse('2026-01-02T03:04:05.000Z');
    await recordDiscoveryOutcomes(
      await recordsIn(file),
      configs,
      [
        { server: 'remote', ok: false, failure: needsLogin },
        { server: 'broken', ok: false, failure: { code: 'LIST_FAILED', text: V1_TEXTS.broken } },
      ],
      failedAt,
    );
    const written = await readFile(file, 'utf8');
    // A connection made before the failure says nothing of it; one of another kind stands, unwritten.
    await recordAuthorized(await recordsIn(file), 'remote', failedAt - 1);
    await recordAuthorized(await recordsIn(file), 'broken', failedAt + 1);
    expect(await readFile(file, 'utf8')).toBe(written);

    await recordAuthorized(await recordsIn(file), 'remote', failedAt + 1);
    expect([...(await readDiscoveryRecords(await recordsIn(file), configs)).keys()]).toEqual(['broken']);
  });

  it('reads a version 1 file, giving each failure the code its text had then, and writes it back as version 2', async () => {
    const file = path.join(tempDir(), 'discovery.json');
    const now = Date.now();
    const outcomes = Object.entries(V1_TEXTS).map(([server, text]) => ({
      server,
      ok: false as const,
      failure: { code: 'CALL_FAILED' as const, text },
    }));
    await recordDiscoveryOutcomes(await recordsIn(file), configs, outcomes, now);
    // The same records as version 1 wrote them: `error` text in place of `failure`.
    const written = JSON.parse(await readFile(file, 'utf8')) as { servers: Record<string, { failure: { text: string } }> };
    const v1Servers = Object.fromEntries(
      Object.entries(written.servers).map(([server, { failure, ...record }]) => [server, { ...record, error: failure.text }]),
    );
    await writeFile(file, JSON.stringify({ version: 1, servers: v1Servers }));

    const read = await readDiscoveryRecords(await recordsIn(file), configs);
    expect(Object.fromEntries([...read].map(([server, record]) => [server, record.failure]))).toEqual({
      remote: { code: 'NEEDS_AUTHORIZATION', text: V1_TEXTS.remote },
      broken: { code: 'LIST_FAILED', text: V1_TEXTS.broken },
      silent: { code: 'SERVER_START_FAILED', text: V1_TEXTS.silent },
    });
    expect(read.get('remote')).toMatchObject({ failures: 1, failedAt: new Date(now).toISOString() });

    // The next write upgrades the file; the version 1 records it kept are carried over, upgraded.
    await recordDiscoveryOutcomes(await recordsIn(file), configs, [{ server: 'silent', ok: true }]);
    const upgraded = JSON.parse(await readFile(file, 'utf8')) as { version: number; servers: Record<string, unknown> };
    expect(upgraded.version).toBe(2);
    expect(upgraded.servers).toEqual({
      remote: expect.objectContaining({ failure: { code: 'NEEDS_AUTHORIZATION', text: V1_TEXTS.remote } }) as unknown,
      broken: expect.objectContaining({ failure: { code: 'LIST_FAILED', text: V1_TEXTS.broken } }) as unknown,
    });
  });
});

describe.each(STORE_BACKENDS)('discovery records in the store ($name)', (backend: StoreBackend) => {
  const store = useBackendStore(backend);

  it("reads only the records of the servers it records or asks about, never every server's", async () => {
    const failure = { code: 'SERVER_START_FAILED' as const, text: 'broken exited' };
    const records = store().discovery;
    const place = storedDiscoveryRecords(records);
    await recordDiscoveryOutcomes(place, configs, [{ server: 'broken', ok: false, failure }]);
    const reads: string[] = [];
    const counted: RecordCollection<DiscoveryRecord> = {
      get: (key) => (reads.push(`get ${key}`), records.get(key)),
      list: () => (reads.push('list'), records.list()),
      listEach: () => (reads.push('list'), records.listEach()),
      put: (key, value, options) => records.put(key, value, options),
      putAll: (all) => records.putAll(all),
      update: (key, change) => records.update(key, change),
      updateAll: (changes) => records.updateAll(changes),
      delete: (key) => records.delete(key),
    };
    const keyed = storedDiscoveryRecords(counted);
    await recordDiscoveryOutcomes(keyed, configs, [
      { server: 'silent', ok: true },
      { server: 'other', ok: false, failure },
    ]);
    expect(await readDiscoveryRecord(keyed, 'broken', configs)).toMatchObject({ failures: 1, failure });
    expect(await readDiscoveryRecord(keyed, 'silent', configs)).toBeUndefined();
    expect(reads).toEqual(['get silent', 'get other', 'get broken', 'get silent']);
    // A record of a config changed since is none.
    const edited = { ...configs, broken: ServerConfigSchema.parse({ command: 'node', args: ['fixed.js'] }) };
    expect(await readDiscoveryRecord(keyed, 'broken', edited)).toBeUndefined();
    expect([...(await readDiscoveryRecords(place, configs)).keys()].sort()).toEqual(['broken', 'other']);
  });
});
